#include "a2s/definition/definition.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "a2s/definition/jsonpath.hpp"

namespace hearth::a2s {
namespace {

// The spec's service definition example (a2s-protocol.md, "YAML Structure"), with the security
// block the table requires.
constexpr std::string_view kExample = R"(serviceName: "ExampleService"
serviceDescription: "Human-readable description"
domain: "api.example.com"
version: "1.0"
checksum: "3a7bd3e2360a3d5be561819c3df9d6e28d"

authentications:
  - type: "oauth2"
    description: "OAuth2 client credentials flow"
    inputVariables:
      CLIENT_ID:
        type: "string"
        description: "OAuth client ID"
        storage: "service"
        optional: false
      CLIENT_SECRET:
        type: "string"
        description: "OAuth client secret"
        storage: "service"
        optional: false
    outputVariables:
      AUTH_TOKEN:
        type: "string"
        description: "Bearer token for API access"
        storage: "service"
        expiry: 3600
        optional: false
    request: |
      POST /oauth/token HTTP/1.1
      Host: api.example.com
      Content-Type: application/x-www-form-urlencoded

      grant_type=client_credentials&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}
    responseMapping:
      "$.access_token": "AUTH_TOKEN"
      "$.expires_in": "AUTH_TOKEN_EXPIRY"

capabilities:
  - name: "ExampleCapability"
    description: "Human-readable description"
    requiredScopes: ["scope:permission"]
    inputVariables:
      AUTH_TOKEN:
        type: "string"
        description: "Authentication token"
        storage: "service"
      USER_EMAIL:
        type: "string"
        description: "User's email address"
        storage: "global"
        optional: true
    tempVariables:
      QUERY:
        type: "string"
        description: "Search query"
        pattern: "^[A-Za-z]+$"
    outputVariables:
      LAST_QUERY:
        type: "string"
        description: "Last successful query"
        storage: "service"
        optional: true
    request: |
      GET /endpoint HTTP/1.1
      Host: api.example.com
      Authorization: Bearer ${AUTH_TOKEN}
      
      ?q=${QUERY}&email=${USER_EMAIL}

errorPatterns:
  - statusCode: 400
    pattern: "Invalid input"
    resolution: "Check input format"

security:
  transport:
    minTlsVersion: "1.2"
  variables:
    encryption: "AES-256-GCM"
)";

json::value sealed(std::string_view yaml) {
  auto doc = yaml_to_json(yaml);
  EXPECT_TRUE(doc.ok()) << (doc.ok() ? "" : doc.error().message);
  return seal(doc.value());
}

std::vector<std::string> problems_of(const json::value& doc) {
  Problems problems;
  auto def = parse_definition(doc, problems);
  EXPECT_EQ(def.has_value(), problems.empty());
  std::vector<std::string> out;
  for (const auto& p : problems) out.push_back(p.to_string());
  return out;
}

json::value edited(std::string_view yaml, std::string_view from, std::string_view to) {
  std::string text(yaml);
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return sealed(text);
}

TEST(Definition, TheSpecsExampleLoadsOnceSealed) {
  auto doc = sealed(kExample);
  Problems problems;
  auto def = parse_definition(doc, problems);
  ASSERT_TRUE(def) << (problems.empty() ? "" : problems[0].to_string());
  EXPECT_EQ(def->service_name, "ExampleService");
  EXPECT_EQ(def->domain, "api.example.com");
  ASSERT_EQ(def->authentications.size(), 1u);
  EXPECT_EQ(def->authentications[0].output[0].expiry_seconds, 3600);
  EXPECT_EQ(def->authentications[0].response_mapping.size(), 2u);
  ASSERT_EQ(def->capabilities.size(), 1u);
  const auto& cap = def->capabilities[0];
  EXPECT_EQ(cap.required_scopes, std::vector<std::string>{"scope:permission"});
  EXPECT_EQ(cap.input[1].storage, Storage::kGlobal);
  EXPECT_EQ(cap.temp[0].storage, Storage::kTemporary);
  EXPECT_EQ(cap.temp[0].pattern, "^[A-Za-z]+$");
  EXPECT_EQ(def->error_patterns[0].status_code, 400);
}

TEST(Definition, ChecksumMismatchIsRefusedWithBothValues) {
  const std::string wrong(64, 'a');
  auto doc =
      yaml_to_json(std::string(kExample).replace(
                       std::string(kExample).find("3a7bd3e2360a3d5be561819c3df9d6e28d"), 34, wrong))
          .value();
  auto problems = problems_of(doc);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].rfind(
                "checksum: does not match the definition (written " + wrong + ", computed ", 0),
            0u)
      << problems[0];
  // The checksum does not depend on key order, layout or YAML versus JSON.
  auto reordered = doc.as_object();
  json::object flipped;
  for (auto it = reordered.end(); it != reordered.begin();) {
    --it;
    flipped[it->key()] = it->value();
  }
  EXPECT_EQ(checksum_of(doc), checksum_of(flipped));
  EXPECT_EQ(checksum_of(doc), checksum_of(yaml_to_json(json::serialize(doc)).value()));
}

TEST(Definition, CanonicalFormIsDocumented) {
  // The worked example of docs/a2s.md.
  auto doc = json::parse(R"({"version":"1.0","checksum":"x","b":[1,2.5,true,null],"a":"é\n"})");
  EXPECT_EQ(canonical_form(doc), "{\"a\":\"é\\n\",\"b\":[1,2.5,true,null],\"version\":\"1.0\"}");
  EXPECT_EQ(checksum_of(doc), "ecdebbb8ebd84870044a28206d170e5e62a11559ef52d38173dd4be571dd4d37");
}

TEST(Definition, ProblemsNameTheirPath) {
  const auto has = [](const std::vector<std::string>& problems, std::string_view expected) {
    for (const auto& p : problems) {
      if (p.rfind(expected, 0) == 0) return true;
    }
    ADD_FAILURE() << "no problem starting with: " << expected;
    for (const auto& p : problems) ADD_FAILURE() << "  got: " << p;
    return false;
  };
  has(problems_of(edited(kExample, "pattern: \"^[A-Za-z]+$\"", "format: \"zipcode\"")),
      "capabilities[0].tempVariables.QUERY.format: must be one of date");
  has(problems_of(edited(kExample, "serviceName: \"ExampleService\"\n", "")),
      "serviceName: required");
  has(problems_of(
          edited(kExample, "domain: \"api.example.com\"", "domain: \"https://api.example.com/\"")),
      "domain: must be a host name");
  has(problems_of(edited(kExample, "expiry: 3600", "expiry: -5")),
      "authentications[0].outputVariables.AUTH_TOKEN.expiry: must be a positive whole number");
  has(problems_of(edited(kExample, "pattern: \"^[A-Za-z]+$\"", "pattern: \"(unclosed\"")),
      "capabilities[0].tempVariables.QUERY.pattern: is not a valid pattern");
  has(problems_of(edited(kExample, "      GET /endpoint HTTP/1.1\n      Host: api.example.com",
                         "      GET /endpoint HTTP/1.1\n      Host: evil.example")),
      "capabilities[0].request: the Host header (evil.example) must be the service's domain");
  has(problems_of(edited(kExample, "?q=${QUERY}", "?q=${QUERY}&x=${UNDECLARED}")),
      "capabilities[0].request: ${UNDECLARED} is not declared");
  has(problems_of(edited(kExample, "\"$.access_token\": \"AUTH_TOKEN\"",
                         "\"$.access_token\": \"NOT_AN_OUTPUT\"")),
      "authentications[0].responseMapping['$.access_token']: 'NOT_AN_OUTPUT' is not one of");
  has(problems_of(edited(kExample, "\"$.expires_in\"", "\"$..expires_in\"")),
      "authentications[0].responseMapping['$..expires_in']: is not a JSONPath");
  has(problems_of(edited(kExample, "statusCode: 400", "statusCode: 99")),
      "errorPatterns[0].statusCode: must be an HTTP status code");
  has(problems_of(edited(kExample, "serviceDescription:", "serviceDescriptoin:")),
      "serviceDescriptoin: unknown member");
  has(problems_of(edited(kExample, "        description: \"Search query\"\n",
                         "        description: \"Search query\"\n        storage: \"service\"\n")),
      "capabilities[0].tempVariables.QUERY.storage: tempVariables are temporary");
  has(problems_of(edited(kExample, "        pattern: \"^[A-Za-z]+$\"",
                         "        pattern: \"^[A-Za-z]+$\"\n        default: \"a1\"")),
      "capabilities[0].tempVariables.QUERY.default: does not check against the variable");
  has(problems_of(
          edited(kExample, "  transport:\n    minTlsVersion: \"1.2\"\n", "  transport: 5\n")),
      "security.transport: must be a mapping");
  has(problems_of(edited(kExample, "security:\n  transport:", "security:\n  trasnport:")),
      "security.trasnport: unknown member");
}

// The spec's example as it is written there: no security object and a checksum that is only a
// placeholder. It loads, with the defaults, and says what to put right.
TEST(Definition, TheSpecsExampleAsWrittenLoadsWithWarnings) {
  std::string text(kExample);
  const auto security = text.find("security:\n");
  ASSERT_NE(security, std::string::npos);
  const auto end = text.find("\n\n", security);
  text.erase(security, end == std::string::npos ? std::string::npos : end - security + 1);
  text.replace(text.find("3a7bd3e2360a3d5be561819c3df9d6e28d"), 34,
               "3a7bd3e2360a3d5be561819c3df9d6e28d...");
  auto doc = yaml_to_json(text);
  ASSERT_TRUE(doc.ok());
  ASSERT_FALSE(doc->as_object().contains("security"));
  Problems problems;
  auto def = parse_definition(doc.value(), problems);
  ASSERT_TRUE(def) << problems[0].to_string();
  std::string warnings;
  for (const auto& w : def->warnings) warnings += w.to_string() + "\n";
  EXPECT_NE(warnings.find("security: absent: the defaults apply"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("checksum: \"3a7bd3e2360a3d5be561819c3df9d6e28d...\" is not a SHA-256"),
            std::string::npos)
      << warnings;
  EXPECT_TRUE(def->security.is_null());
  // Sealed, only the missing security is left to warn about.
  Problems again;
  auto sealed_def = parse_definition(seal(doc.value()), again);
  ASSERT_TRUE(sealed_def);
  ASSERT_EQ(sealed_def->warnings.size(), 1u);
  EXPECT_EQ(sealed_def->warnings[0].path, "security");
}

TEST(Definition, ResponseSchemasAreCompiledAtLoad) {
  std::string text(kExample);
  text +=
      "responseSchemas:\n  Result:\n    statusCodes: [200]\n    format: application/json\n"
      "    schema: {type: object, properties: {n: {type: 5}}}\n";
  auto problems = problems_of(sealed(text));
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0].rfind("responseSchemas.Result.schema.properties.n.type: ", 0), 0u)
      << problems[0];
  std::string good(kExample);
  good +=
      "responseSchemas:\n  Result:\n    statusCodes: [200, 201]\n    format: application/json\n"
      "    schema: {type: object}\n    required: [items]\n";
  Problems none;
  auto def = parse_definition(sealed(good), none);
  ASSERT_TRUE(def);
  const auto& rs = def->compiled_schemas.at("Result");
  EXPECT_EQ(rs.status_codes, (std::vector<int>{200, 201}));
  EXPECT_EQ(rs.required, std::vector<std::string>{"items"});
  ASSERT_TRUE(rs.schema);
  EXPECT_FALSE(rs.schema->validate(json::value(3)).empty());
}

TEST(Definition, RateLimitShapes) {
  auto with = [](std::string_view rate) {
    std::string text(kExample);
    text += rate;
    Problems problems;
    auto def = parse_definition(sealed(text), problems);
    EXPECT_TRUE(def) << (problems.empty() ? "" : problems[0].to_string());
    return def ? def->rate_limit : std::nullopt;
  };
  auto a = with("rateLimits:\n  requests: 10\n  period: 60\n  burst: 2\n");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->requests, 10);
  EXPECT_EQ(a->burst, 2);
  auto b = with("rateLimits:\n  requestsPerSecond: 5\n");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->period_seconds, 1);
}

TEST(Yaml, ScalarsAsTheCoreSchemaTypesThem) {
  auto doc =
      yaml_to_json("a: 1\nb: 1.5\nc: \"1.0\"\nd: true\ne: ~\nf: 'x'\ng: 0x10\nh: 1.0\n").value();
  EXPECT_EQ(json::serialize(doc),
            R"({"a":1,"b":1.5,"c":"1.0","d":true,"e":null,"f":"x","g":16,"h":1})");
  // 1.0 is a float, written as JavaScript writes it.
  EXPECT_TRUE(doc.at("h").is_double());
  EXPECT_TRUE(doc.at("a").is_int64());
}

TEST(Yaml, RefusesDuplicatesTagsBombsAndSeveralDocuments) {
  EXPECT_EQ(yaml_to_json("a: 1\na: 2\n").error().message, "line 2: duplicate key 'a'");
  EXPECT_NE(yaml_to_json("a: !!binary aGk=\n").error().message.find("tags"), std::string::npos);
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [*" + static_cast<char>(c - 1) + ", *" +
            static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + ", *" +
            static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + ", *" +
            static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + ", *" +
            static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + ", *" +
            static_cast<char>(c - 1) + "]\n";
  }
  EXPECT_NE(yaml_to_json(bomb).error().message.find("too many values"), std::string::npos);
  // Few values, much text: a long string aliased over and over.
  std::string text_bomb =
      "a: &a " + std::string(4000, 'x') + "\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n";
  text_bomb += "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\n";
  text_bomb += "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n";
  EXPECT_NE(yaml_to_json(text_bomb).error().message.find("too much text"), std::string::npos);
  EXPECT_NE(yaml_to_json("a: 1\n---\nb: 2\n").error().message.find("one YAML document a file"),
            std::string::npos);
  EXPECT_EQ(yaml_to_json("a: [1, 2\n").error().message.rfind("line ", 0), 0u);
  EXPECT_EQ(yaml_to_json("a: \"\xff\xfe\"\n").error().message, "the file is not valid UTF-8 text");
  EXPECT_EQ(yaml_to_json(std::string("a: 1\nk\0\0\x06: 2\n", 12)).error().message,
            "line 2: a control character (not text)");
}

TEST(Yaml, RoundTripKeepsTemplatesReadable) {
  auto doc = sealed(kExample);
  const std::string yaml = json_to_yaml(doc);
  EXPECT_NE(yaml.find("    request: |\n      POST /oauth/token HTTP/1.1\n"), std::string::npos)
      << yaml;
  auto back = yaml_to_json(yaml);
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << yaml;
  EXPECT_EQ(back.value(), doc);
  auto odd = json::parse(R"({"k":[{},[],"", "no\ttrailing\n\n", " lead\nx", "a: b", "-", "true",
      "1", {"x y": null}], "n": -0.5})");
  EXPECT_EQ(yaml_to_json(json_to_yaml(odd)).value(), odd) << json_to_yaml(odd);
  // Doubles stay doubles, integers integers.
  auto numbers = json::parse(R"({"d":[100.0,-3.0,0.0,42.5,1e21,1e-7,1e16],"i":[100,-3,0]})");
  EXPECT_EQ(yaml_to_json(json_to_yaml(numbers)).value(), numbers) << json_to_yaml(numbers);
  EXPECT_NE(json_to_yaml(numbers).find("- 100.0\n"), std::string::npos) << json_to_yaml(numbers);
  // A multi-line text alone (found by the fuzzer: a top-level block needs indenting).
  const json::value alone = json::string("first: line\nsecond, ~line");
  const json::value nel = json::string(
      "a\xC2\x85"
      "b\nc\xE2\x80\xA8\\\"\t\xEF\xBB\xBF");
  EXPECT_EQ(yaml_to_json(json_to_yaml(nel)).value(), nel) << json_to_yaml(nel);
  EXPECT_EQ(yaml_to_json(json_to_yaml(alone)).value(), alone) << json_to_yaml(alone);
}

TEST(JsonPath, TheSubset) {
  auto doc = json::parse(R"({"a":{"b c":[10,{"d":"x"}]},"t":"tok"})");
  EXPECT_EQ(*select(doc, "$.t"), json::value("tok"));
  EXPECT_EQ(*select(doc, "$.a['b c'][1].d"), json::value("x"));
  EXPECT_EQ(*select(doc, "$[\"a\"][\"b c\"][0]"), json::value(10));
  EXPECT_EQ(select(doc, "$.a.missing"), nullptr);
  EXPECT_EQ(select(doc, "$.a['b c'][5]"), nullptr);
  EXPECT_TRUE(valid_path("$"));
  for (const char* bad : {"", "a.b", "$..a", "$.*", "$[?(@.a)]", "$.a[", "$['a'"}) {
    EXPECT_FALSE(valid_path(bad)) << bad;
  }
}

TEST(Load, OneBadFileDoesNotStopTheOthers) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("a2s-load-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sub");
  std::ofstream(dir / "good.yaml") << json_to_yaml(sealed(kExample));
  std::string broken(kExample);  // sealed once, then changed: its checksum no longer matches
  broken.replace(broken.find("3a7bd3e2360a3d5be561819c3df9d6e28d"), 34, std::string(64, 'a'));
  std::ofstream(dir / "sub" / "bad.yaml") << broken;
  std::ofstream(dir / "notes.txt") << "ignored";
  auto other = sealed(kExample).as_object();
  std::ofstream(dir / "twice.json") << json::serialize(other);
  auto loaded = load_directory(dir);
  ASSERT_EQ(loaded.definitions.size(), 1u);
  EXPECT_EQ(loaded.definitions[0]->source, (dir / "good.yaml").string());
  ASSERT_EQ(loaded.failures.size(), 2u);
  EXPECT_EQ(loaded.failures[0].file, dir / "sub" / "bad.yaml");
  EXPECT_EQ(loaded.failures[0].problems[0].path, "checksum");
  EXPECT_EQ(loaded.failures[1].problems[0].to_string(),
            "serviceName: 'ExampleService' is defined twice");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::a2s
