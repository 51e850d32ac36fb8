#include "a2s/search/search.hpp"

#include <gtest/gtest.h>

namespace hearth::a2s {
namespace {

std::shared_ptr<const Definition> service(
    std::string name, std::string description,
    const std::vector<std::pair<std::string, std::string>>& caps,
    const std::string& var_description = "") {
  auto d = std::make_shared<Definition>();
  d->service_name = std::move(name);
  d->service_description = std::move(description);
  d->domain = "api." + d->service_name + ".example";
  for (const auto& [n, desc] : caps) {
    Capability c;
    c.name = n;
    c.description = desc;
    if (!var_description.empty()) {
      Variable v;
      v.name = "X";
      v.description = var_description;
      c.temp.push_back(v);
    }
    d->capabilities.push_back(std::move(c));
  }
  return d;
}

std::vector<std::shared_ptr<const Definition>> corpus() {
  return {
      service("WeatherService", "Global weather data and forecasts",
              {{"Forecast Weather", "Get weather forecast for a specific date"},
               {"Extended Forecast", "Multi-day weather forecast"}}),
      service("FlightService", "Flight booking service",
              {{"Search Flights", "Find available flights between cities"},
               {"Book Flight", "Book a seat on a flight"}},
              "Departure airport code"),
      service("HotelService", "Hotel booking service",
              {{"Search Hotels", "Find available hotels in a city"}}),
      service("MailService", "Send and read email",
              {{"sendMessage", "Send an email message to a recipient"}}),
  };
}

TEST(Search, RanksTheObviousServiceFirst) {
  SearchIndex index(corpus());
  auto hits = index.search("What's the weather for this Thursday?");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].definition->service_name, "WeatherService");
  EXPECT_EQ(hits[0].definition->capabilities[hits[0].capabilities[0].index].name,
            "Forecast Weather");
  EXPECT_GT(hits[0].score, 0.5);
  for (const auto& h : hits) {
    EXPECT_GT(h.score, 0);
    EXPECT_LE(h.score, 1);
  }
  hits = index.search("book me a flight to Seattle");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].definition->service_name, "FlightService");
  EXPECT_EQ(hits[0].definition->capabilities[hits[0].capabilities[0].index].name, "Book Flight");
}

TEST(Search, StemmingCamelCaseAndSynonyms) {
  SearchIndex index(corpus());
  auto hits = index.search("forecasts");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].definition->service_name, "WeatherService");
  hits = index.search("send message");  // matches the camelCase name sendMessage
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].definition->service_name, "MailService");
  hits = index.search("a place to stay tonight");  // stay -> hotel
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].definition->service_name, "HotelService");
  hits = index.search("departure airport");  // from a variable's description
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].definition->service_name, "FlightService");
}

TEST(Search, AFullMatchScoresHigherThanAPartialOne) {
  SearchIndex index(corpus());
  const auto full = index.search("search hotels");
  const auto partial = index.search("search hotels volcano");  // volcano: no capability has it
  const auto half = index.search("hotels flights");
  ASSERT_FALSE(full.empty());
  ASSERT_FALSE(half.empty());
  EXPECT_NEAR(full[0].score, partial[0].score, 1e-9);  // an unknown word changes nothing
  EXPECT_GT(full[0].score, half[0].score);
}

TEST(Search, NothingForNothingAndLimits) {
  SearchIndex index(corpus());
  EXPECT_TRUE(index.search("").empty());
  EXPECT_TRUE(index.search("the of and to").empty());
  EXPECT_TRUE(index.search("zzzz qqqq").empty());
  SearchOptions one;
  one.limit = 1;
  one.capabilities_limit = 1;
  auto hits = index.search("book search", one);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].capabilities.size(), 1u);
  EXPECT_GT(index.memory_bytes(), 0u);
}

TEST(Search, RegistryResponseShape) {
  auto defs = corpus();
  auto def = std::make_shared<Definition>(*defs[0]);
  def->document = json::parse(R"({"capabilities":[{"name":"Forecast Weather","tempVariables":
      {"DATE":{"type":"string","description":"Forecast date","format":"date"}},
      "request":"GET /v1/forecast HTTP/1.1\nHost: api.weather.example\n"}]})");
  SearchIndex index({def});
  auto response = registry_response(index.search("weather forecast date"));
  const auto& s = response.at("services").at(0);
  EXPECT_EQ(s.at("name"), json::value("WeatherService"));
  EXPECT_TRUE(s.at("relevance_score").is_double());
  const auto& c = s.at("relevant_capabilities").at(0);
  EXPECT_EQ(c.at("name"), json::value("Forecast Weather"));
  EXPECT_EQ(c.at("tempVariables").at("DATE").at("format"), json::value("date"));
  EXPECT_NE(std::string(c.at("request").as_string()).find("GET /v1/forecast"), std::string::npos);
}

}  // namespace
}  // namespace hearth::a2s
