#include "a2s/template/template.hpp"

#include <gtest/gtest.h>

#include <map>

namespace hearth::a2s {
namespace {

struct Values {
  std::map<std::string, json::value, std::less<>> values;
  Lookup lookup() const {
    return [this](std::string_view name) -> const json::value* {
      auto it = values.find(name);
      return it == values.end() ? nullptr : &it->second;
    };
  }
};

Template parsed(std::string_view text) {
  auto t = parse_template(text);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return t.ok() ? std::move(t).value() : Template{};
}

FilledRequest filled(const Template& t, const Values& v) {
  auto f = fill(t, v.lookup());
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().message);
  return f.ok() ? std::move(f).value() : FilledRequest{};
}

std::string fill_error(const Template& t, const Values& v) {
  auto f = fill(t, v.lookup());
  EXPECT_FALSE(f.ok());
  if (f.ok()) return "";
  EXPECT_EQ(f.error().code, ErrorCode::kInvalidParams);
  return f.error().message;
}

// The spec's weather example, as YAML leaves it (trailing newline, a blank line with spaces).
constexpr std::string_view kWeather =
    "GET /v1/forecast HTTP/1.1\n"
    "Host: api.weather.example\n"
    "Authorization: Bearer ${API_KEY}\n"
    "      \n"
    "?date=${DATE}&lat=${LAT}&lon=${LON}\n";

TEST(Template, ParsesTheSpecsTrailingQueryForm) {
  auto t = parsed(kWeather);
  EXPECT_EQ(t.method, "GET");
  EXPECT_EQ(t.target, "/v1/forecast");
  EXPECT_EQ(t.host, "api.weather.example");
  ASSERT_EQ(t.headers.size(), 1u);
  EXPECT_EQ(t.trailing_query, "date=${DATE}&lat=${LAT}&lon=${LON}");
  EXPECT_TRUE(t.body.empty());
  EXPECT_EQ(t.placeholders, (std::vector<std::string>{"API_KEY", "DATE", "LAT", "LON"}));
}

TEST(Template, OptionalQueryValuesLeftOutDropTheirPair) {
  auto t = parsed(kWeather);
  Values v;
  v.values["API_KEY"] = "k";
  v.values["DATE"] = "2026-11-26";
  v.values["LON"] = -122.3;
  auto f = filled(t, v);
  EXPECT_EQ(f.target, "/v1/forecast?date=2026-11-26&lon=-122.3");
  ASSERT_EQ(f.headers.size(), 1u);
  EXPECT_EQ(f.headers[0].second, "Bearer k");
  v.values.erase("API_KEY");
  EXPECT_TRUE(filled(t, v).headers.empty());  // an absent header value drops the line
}

TEST(Template, PathAndQueryValuesAreEncoded) {
  auto t = parsed("GET /v1/items/${ID}/x?q=${Q}&fixed=a%20b HTTP/1.1\nHost: h\n");
  Values v;
  v.values["ID"] = "../admin?x=1#f";
  v.values["Q"] = "a&admin=1=b c/d+e";
  EXPECT_EQ(filled(t, v).target,
            "/v1/items/..%2Fadmin%3Fx%3D1%23f/x?q=a%26admin%3D1%3Db%20c%2Fd%2Be&fixed=a%20b");
  v.values["ID"] = "@evil.example";
  v.values["Q"] = "http://evil.example/";
  EXPECT_EQ(filled(t, v).target,
            "/v1/items/%40evil.example/x?q=http%3A%2F%2Fevil.example%2F&fixed=a%20b");
}

TEST(Template, DotSegmentsAndMissingPathValuesAreRefused) {
  auto t = parsed("GET /v1/${ID}/x HTTP/1.1\nHost: h\n");
  for (const char* bad : {".", "..", ""}) {
    Values v;
    v.values["ID"] = bad;
    EXPECT_NE(fill_error(t, v).find("ID"), std::string::npos) << bad;
  }
  Values none;
  EXPECT_EQ(fill_error(t, none), "ID: required in the path");
  // A dot inside a longer segment is harmless.
  Values ok;
  ok.values["ID"] = "a..b";
  EXPECT_EQ(filled(t, ok).target, "/v1/a..b/x");
}

TEST(Template, HeaderValuesCannotAddLines) {
  auto t = parsed("GET / HTTP/1.1\nHost: h\nX-Note: note ${N}\n");
  const std::vector<std::string> bads = {"x\r\nX-Evil: 1", "x\nX-Evil: 1", "x\rX",
                                         std::string("a\0b", 3), "bell\x07"};
  for (const auto& bad : bads) {
    Values v;
    v.values["N"] = json::string(bad);
    auto message = fill_error(t, v);
    EXPECT_EQ(message.rfind("N: ", 0), 0u) << message;
    EXPECT_EQ(message.find("Evil"), std::string::npos);
  }
  Values v;
  v.values["N"] = "tab\tis fine";
  EXPECT_EQ(filled(t, v).headers[0].second, "note tab\tis fine");
}

TEST(Template, JsonBodiesEscapeStringsAndEncodeValues) {
  auto t = parsed(
      "POST /v1/x HTTP/1.1\nHost: h\nContent-Type: application/json\n\n"
      "{\"text\": \"say ${TEXT}\", \"n\": ${N}, \"obj\": ${OBJ}, \"opt\": ${OPT}}\n");
  Values v;
  v.values["TEXT"] = "\"}, \"admin\": true, \"x\": \"\n";
  v.values["N"] = "3, \"admin\": true";  // a string where a value goes: quoted, not spliced
  v.values["OBJ"] = json::parse(R"({"a":[1,2]})");
  auto f = filled(t, v);
  auto body = json::parse(f.body).as_object();
  EXPECT_EQ(body.at("text").as_string(), "say \"}, \"admin\": true, \"x\": \"\n");
  EXPECT_EQ(body.at("n").as_string(), "3, \"admin\": true");
  EXPECT_EQ(json::serialize(body.at("obj")), R"({"a":[1,2]})");
  EXPECT_TRUE(body.at("opt").is_null());
  EXPECT_FALSE(body.contains("admin"));
}

TEST(Template, FormBodiesAreFormEncoded) {
  auto t = parsed(
      "POST /token HTTP/1.1\nHost: h\nContent-Type: application/x-www-form-urlencoded\n\n"
      "grant_type=client_credentials&client_id=${ID}&scope=${SCOPE}\n");
  Values v;
  v.values["ID"] = "a b&admin=1";
  EXPECT_EQ(filled(t, v).body, "grant_type=client_credentials&client_id=a+b%26admin%3D1");
}

TEST(Template, ParseErrorsNameTheLine) {
  const auto message = [](std::string_view text) {
    auto t = parse_template(text);
    EXPECT_FALSE(t.ok());
    return t.ok() ? std::string() : t.error().message;
  };
  EXPECT_EQ(message(""), "line 1: empty template: a request line is required");
  EXPECT_EQ(message("GET http://evil.example/x HTTP/1.1\nHost: h\n").rfind("line 1: the target", 0),
            0u);
  EXPECT_EQ(message("GET //evil.example/x HTTP/1.1\nHost: h\n"),
            "line 1: the target may not start with '//'");
  EXPECT_EQ(message("GET /v1/x HTTP/1.1\nHost: h\n\n?a=1 b\n"),
            "line 4: the query may not hold spaces, control characters or a fragment");
  EXPECT_EQ(message("GET /v1/x\x01 HTTP/1.1\nHost: h\n"),
            "line 1: the target may not hold spaces, control characters or a fragment");
  EXPECT_EQ(message("GET / HTTP/1.1\nHost: ${H}\n"),
            "line 2: the Host header cannot hold a placeholder");
  EXPECT_EQ(message("GET / HTTP/1.1\nX-A\n"), "line 2: header line without ':'");
  EXPECT_EQ(message("GET / HTTP/1.1\nHost: h\nX-A: a\rb\n"),
            "line 3: a header value may not hold control characters");
  EXPECT_EQ(message("GET / HTTP/1.1\nX-A: 1\n"), "line 2: a Host header is required");
  EXPECT_EQ(message("GET / HTTP/1.1\nHost: h\nHost: h\n"), "line 3: a second Host header");
  EXPECT_EQ(message("GET /${X HTTP/1.1\nHost: h\n"), "line 1: '${' without its '}'");
  EXPECT_EQ(message("GET /?${K}=1 HTTP/1.1\nHost: h\n"),
            "line 1: a placeholder may not be a query parameter's name");
  EXPECT_EQ(message("${M} / HTTP/1.1\nHost: h\n"),
            "line 1: the method must be an upper-case token (GET, POST, ...)");
  EXPECT_EQ(message("POST / HTTP/1.1\nHost: h\nContent-Length: 3\n\nabc"),
            "line 3: the Content-Length header is hearth's to set: leave it out");
  EXPECT_EQ(message("POST / HTTP/1.1\nHost: h\nContent-Type: application/xml\n\n<a>${X}</a>")
                .rfind("line 5: placeholders in a application/xml body", 0),
            0u);
  EXPECT_NE(message("POST / HTTP/1.1\nHost: h\nContent-Type: application/json\n\n{\"a\": ${X}")
                .find("not JSON"),
            std::string::npos);
}

TEST(Template, EscapedDollarIsLiteral) {
  auto t = parsed("GET /a?price=$${X} HTTP/1.1\nHost: h\n");
  EXPECT_TRUE(t.placeholders.empty());
  EXPECT_EQ(filled(t, {}).target, "/a?price=${X}");
}

TEST(Template, InvalidUtf8IsRefused) {
  auto t = parsed("GET /a?q=${Q} HTTP/1.1\nHost: h\n");
  Values v;
  v.values["Q"] = "\xff\xfe";
  EXPECT_EQ(fill_error(t, v), "Q: must be valid UTF-8");
}

TEST(Template, LongValuesStayInTheirPlace) {
  auto t = parsed("GET /a/${P}?q=${Q} HTTP/1.1\nHost: h\n");
  Values v;
  v.values["P"] = std::string(100000, '/');
  v.values["Q"] = std::string(100000, '&');
  auto f = filled(t, v);
  EXPECT_EQ(f.target.find('&'), std::string::npos);
  EXPECT_EQ(f.target.find("//"), std::string::npos);
}

}  // namespace
}  // namespace hearth::a2s
