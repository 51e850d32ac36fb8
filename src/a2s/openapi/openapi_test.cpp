#include "a2s/openapi/openapi.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "a2s/definition/definition.hpp"

namespace hearth::a2s {
namespace {

json::value fixture(const std::string& name) {
  const char* root = std::getenv("HEARTH_SOURCE_DIR");
  std::ifstream in(std::string(root != nullptr ? root : ".") + "/tests/a2s/openapi/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  auto doc = yaml_to_json(text.str());
  EXPECT_TRUE(doc.ok()) << name;
  return doc.ok() ? std::move(doc).value() : json::value();
}

/// Imports, then checks that the result loads as a definition (its checksum too).
Definition imported(const std::string& name, ImportResult* out = nullptr,
                    const ImportOptions& options = {}) {
  auto r = import_openapi(fixture(name), options);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (!r.ok()) return {};
  // Through YAML and back, as `hearth registry import` writes it.
  auto again = yaml_to_json(json_to_yaml(r->definition));
  EXPECT_TRUE(again.ok());
  Problems problems;
  auto def = parse_definition(again.value(), problems);
  EXPECT_TRUE(def) << (problems.empty() ? "" : problems[0].to_string());
  if (out != nullptr) *out = std::move(r).value();
  return def ? *def : Definition{};
}

const Capability* cap(const Definition& def, std::string_view name) {
  for (const auto& c : def.capabilities) {
    if (c.name == name) return &c;
  }
  ADD_FAILURE() << "no capability " << name;
  return nullptr;
}

const Variable* var(const Variables& vars, std::string_view name) {
  for (const auto& v : vars) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

TEST(OpenApi, PetstoreOperationsBecomeCapabilities) {
  ImportResult result;
  auto def = imported("petstore.yaml", &result);
  EXPECT_EQ(def.service_name, "SwaggerPetstore");
  EXPECT_EQ(def.domain, "petstore.example.com");
  EXPECT_EQ(def.version, "1.0.7");
  ASSERT_EQ(def.capabilities.size(), 4u);  // uploadPhoto (multipart) left out
  bool warned = false;
  for (const auto& w : result.warnings) {
    warned = warned || w.find("uploadPhoto") != std::string::npos;
  }
  EXPECT_TRUE(warned);

  const auto* list = cap(def, "listPets");
  ASSERT_NE(list, nullptr);
  EXPECT_NE(list->request.find("GET /v2/pets?limit=${LIMIT}&status=${STATUS} HTTP/1.1\n"
                               "Host: petstore.example.com\n"),
            std::string::npos)
      << list->request;
  EXPECT_NE(list->request.find("X-Request-Id: ${X_REQUEST_ID}"), std::string::npos);
  EXPECT_NE(list->request.find("Authorization: Bearer ${BEARER_AUTH_TOKEN}"), std::string::npos);
  const auto* limit = var(list->temp, "LIMIT");
  ASSERT_NE(limit, nullptr);
  EXPECT_EQ(limit->type, VarType::kInteger);
  EXPECT_TRUE(limit->optional);
  EXPECT_EQ(limit->min, 1);
  EXPECT_EQ(limit->max, 100);
  EXPECT_EQ(limit->default_value, json::value(20));
  EXPECT_EQ(var(list->temp, "STATUS")->pattern, "(available|pending|sold)");
  EXPECT_EQ(var(list->temp, "X_REQUEST_ID")->format, "uuid");
  EXPECT_EQ(var(list->input, "BEARER_AUTH_TOKEN")->storage, Storage::kService);
  EXPECT_EQ(list->response_schema, "#/responseSchemas/LIST_PETS_RESPONSE");
  // The response schema stands alone: the document's $refs are written out.
  const auto& pets = def.compiled_schemas.at("LIST_PETS_RESPONSE");
  ASSERT_TRUE(pets.schema);
  EXPECT_TRUE(pets.schema->validate(json::parse(R"([{"id": 1, "name": "Rex"}])")).empty());
  EXPECT_FALSE(pets.schema->validate(json::parse(R"([{"id": "one"}])")).empty());

  const auto* create = cap(def, "createPet");
  ASSERT_NE(create, nullptr);
  EXPECT_NE(create->request.find("Content-Type: application/json"), std::string::npos);
  EXPECT_NE(create->request.find(R"({"name": "${NAME}", "tag": "${TAG}", "age": ${AGE}})"),
            std::string::npos)
      << create->request;
  EXPECT_FALSE(var(create->temp, "NAME")->optional);
  EXPECT_TRUE(var(create->temp, "TAG")->optional);

  const auto* show = cap(def, "showPetById");
  ASSERT_NE(show, nullptr);
  EXPECT_NE(show->request.find("GET /v2/pets/${PET_ID} HTTP/1.1"), std::string::npos);
  EXPECT_FALSE(var(show->temp, "PET_ID")->optional);
  // security: [] on deletePet: no Authorization.
  EXPECT_EQ(cap(def, "deletePet")->request.find("Authorization"), std::string::npos);
}

TEST(OpenApi, OAuth2ClientCredentialsAndApiKeys) {
  ImportResult result;
  auto def = imported("tokens.json", &result);
  EXPECT_EQ(def.service_name, "AcmeBilling");
  EXPECT_EQ(def.service_description, "Invoices and payments for Acme customers");
  ASSERT_EQ(def.authentications.size(), 1u);
  const auto& auth = def.authentications[0];
  EXPECT_EQ(auth.type, "oauth2");
  EXPECT_NE(auth.request.find("POST /oauth/token HTTP/1.1"), std::string::npos);
  EXPECT_EQ(auth.response_mapping[0],
            std::make_pair(std::string("$.access_token"), std::string("AUTH_TOKEN")));
  const auto* list = cap(def, "listInvoices");
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->required_scopes, std::vector<std::string>{"invoices:read"});
  EXPECT_NE(list->request.find("Authorization: Bearer ${AUTH_TOKEN}"), std::string::npos);
  EXPECT_EQ(var(list->temp, "SINCE")->type, VarType::kDate);
  EXPECT_NE(cap(def, "createInvoice")->request.find("amount=${AMOUNT}&memo=${MEMO}"),
            std::string::npos);
  EXPECT_NE(cap(def, "status")->request.find("X-Api-Key: ${KEY_KEY}"), std::string::npos);
  bool warned = false;
  for (const auto& w : result.warnings) warned = warned || w.find("openid") != std::string::npos;
  EXPECT_TRUE(warned);
  // Another server.
  ImportOptions sandbox;
  sandbox.server_url = "https://sandbox.acme.example/test";
  sandbox.service_name = "AcmeSandbox";
  auto other = imported("tokens.json", nullptr, sandbox);
  EXPECT_EQ(other.domain, "sandbox.acme.example");
  EXPECT_EQ(other.service_name, "AcmeSandbox");
  EXPECT_NE(cap(other, "status")->request.find("GET /test/status HTTP/1.1"), std::string::npos);
}

TEST(OpenApi, ServerVariablesAndReferenceCycles) {
  auto def = imported("cycles.yaml");
  EXPECT_EQ(def.domain, "eu.trees.example:8443");
  const auto* node = cap(def, "getNode");
  ASSERT_NE(node, nullptr);
  EXPECT_NE(node->request.find("GET /api/nodes/${ID}?depth=${DEPTH} HTTP/1.1"), std::string::npos);
  EXPECT_EQ(var(node->temp, "ID")->type, VarType::kInteger);
  EXPECT_EQ(var(node->temp, "DEPTH")->type, VarType::kString);  // its schema is a cycle
}

TEST(OpenApi, RefusesWhatItCannotImport) {
  auto swagger = import_openapi(fixture("swagger2.json"), {});
  ASSERT_FALSE(swagger.ok());
  EXPECT_NE(swagger.error().message.find("Swagger 2.0"), std::string::npos);
  auto none =
      import_openapi(json::parse(R"({"openapi":"3.0.0","info":{"title":"x"},"paths":{}})"), {});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("servers"), std::string::npos);
  ImportOptions missing;
  missing.server_url = "https://nope.example";
  EXPECT_FALSE(import_openapi(fixture("tokens.json"), missing).ok());
}

}  // namespace
}  // namespace hearth::a2s
