#include "a2s/search/search.hpp"

#include <gtest/gtest.h>

#include <algorithm>

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

/// The weight at which `query`'s word `word` reaches `term` (any term when empty) through `via`:
/// 0 when it does not, -1 when the request has no such word (a stop word, say).
double reach(const SearchIndex& index, std::string_view query, std::string_view word,
             std::string_view via, std::string_view term = {}) {
  double weight = -1;
  for (const auto& w : index.interpret(query)) {
    if (w.word != word) continue;
    weight = 0;
    for (const auto& t : w.terms) {
      if (t.via == via && (term.empty() || t.term == term)) weight = std::max(weight, t.weight);
    }
  }
  return weight;
}

/// The words of `query` that name a place.
std::vector<std::string> places(const SearchIndex& index, std::string_view query) {
  std::vector<std::string> out;
  for (const auto& w : index.interpret(query)) {
    if (w.place) out.push_back(w.word);
  }
  return out;
}

/// The name of the service ranked first for `query`, or "nothing".
std::string first(const SearchIndex& index, std::string_view query) {
  const auto hits = index.search(query);
  return hits.empty() ? std::string("nothing") : hits[0].definition->service_name;
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

// Words the stemmer would cut to one stem ("animal", "anime" and "animation" to "anim";
// "customer" to "custom"; "authorization" to "author") keep stems of their own.
TEST(Search, WordsTheStemmerWouldConflateStayApart) {
  SearchIndex index({
      service("Catfacts", "Daily facts about animals", {{"Random Fact", "A random animal fact"}}),
      service("Animechan", "Quotes from anime series", {{"Random Quote", "A quote from an anime"}}),
      service("Voicemint", "Custom voices for your product",
              {{"Clone Voice", "A custom synthetic voice from a sample"}}),
      service("Helpdeck", "Customer support tickets",
              {{"Open Ticket", "Open a ticket for a customer"}}),
      service("Shelfmark", "Books and their authors",
              {{"Find Author", "Books written by an author"}}),
      service("Keyturn", "OAuth authorization server",
              {{"Issue Token", "Grant an authorization token"}}),
      service("Grimoire", "Spells of a fantasy game", {{"Spell", "One spell and its effects"}}),
      service("Proofly", "Spelling and grammar checks",
              {{"Check", "Mark spelling mistakes in a text"}}),
      service("Railtimes", "Train departures", {{"Departures", "The next trains from a station"}}),
      service("Modelhub", "Pretrained vision models",
              {{"Models", "Models trained on public images"}}),
      service("Fedstats", "Federal Reserve economic data", {{"Series", "Rates and money supply"}}),
      service("Tablehop", "Restaurant reservations", {{"Reserve", "Reservations at restaurants"}}),
      service("Wayline", "Driving directions", {{"Route", "Turn-by-turn directions"}}),
      service("Inboxer", "Direct messages", {{"Send", "Send a direct message"}}),
      service("Spendly", "Expense reports", {{"Expenses", "Log expenses by category"}}),
      service("Luxwatch", "Expensive watches", {{"Prices", "Prices of expensive watches"}}),
      service("Crowdmeter", "How busy a place is", {{"Crowds", "Busy hours of a shop"}}),
      service("Bizdir", "Business directory", {{"Companies", "Businesses by town"}}),
  });
  const auto names = [&](const std::string& query) {
    std::vector<std::string> out;
    for (const auto& h : index.search(query)) out.push_back(h.definition->service_name);
    return out;
  };
  EXPECT_EQ(names("anime"), std::vector<std::string>{"Animechan"});
  EXPECT_EQ(names("animals"), std::vector<std::string>{"Catfacts"});
  EXPECT_EQ(names("customers"), std::vector<std::string>{"Helpdeck"});
  EXPECT_EQ(names("authorization"), std::vector<std::string>{"Keyturn"});
  EXPECT_EQ(names("author"), std::vector<std::string>{"Shelfmark"});
  // (WordNet relates "spelling" and "spell" as words derived from one another: below the word.)
  EXPECT_EQ(first(index, "spelling"), "Proofly");
  EXPECT_EQ(first(index, "how to check my spelling"), "Proofly");
  EXPECT_EQ(first(index, "spells"), "Grimoire");
  EXPECT_EQ(names("trains"), std::vector<std::string>{"Railtimes"});
  EXPECT_EQ(names("trained models"), std::vector<std::string>{"Modelhub"});
  EXPECT_EQ(reach(index, "reservations", "reservations", "word", "reservation"), 1);
  EXPECT_EQ(reach(index, "reservations", "reservations", "word", "reserv"), 0);
  EXPECT_EQ(first(index, "reservations"), "Tablehop");
  EXPECT_EQ(first(index, "federal reserve"), "Fedstats");
  EXPECT_EQ(names("directions"), std::vector<std::string>{"Wayline"});
  EXPECT_EQ(names("expenses"), std::vector<std::string>{"Spendly"});
  EXPECT_EQ(names("businesses"), std::vector<std::string>{"Bizdir"});
  EXPECT_EQ(first(index, "how busy is the shop"), "Crowdmeter");
}

// A request typed without diacritics finds the definition written with them, and the other way
// round; Latin-1's signs part words.
TEST(Search, LettersWithDiacriticsMatchTheirPlainForms) {
  SearchIndex index({
      service("Pokémon TCG", "Cards of the Pokémon trading card game",
              {{"Find Card", "Search cards by name"}}),
      service("São Paulo Transit", "Buses and metro of São Paulo",
              {{"Departures", "Next departures from a stop"}}),
      service("Wetterdienst", "Weather for ZÜRICH and Straße-level forecasts",
              {{"Forecast", "Hourly forecast"}}),
      service("Cardshop", "Greeting cards", {{"Send Card", "Mail a greeting card"}}),
  });
  EXPECT_EQ(first(index, "pokemon cards"), "Pokémon TCG");
  EXPECT_EQ(first(index, "buses in sao paulo"), "São Paulo Transit");
  EXPECT_EQ(first(index, "zurich strasse"), "Wetterdienst");
  EXPECT_EQ(first(index, "Pokémon"), "Pokémon TCG");
  // "°C" and "©" are not letters: "20°C" is the words "20" and "c".
  EXPECT_EQ(first(index, "©hourly°forecast"), "Wetterdienst");
}

// A request in British spelling finds a definition in American spelling as the American
// spelling would, and the other way round (not as a related word, at less weight).
TEST(Search, BritishAndAmericanSpellingsMeet) {
  SearchIndex index({
      service("Palettely", "Color palettes from a photo", {{"Extract Colors", "Dominant colors"}}),
      service("Squeezer", "Image optimizer", {{"Optimize Image", "Smaller files, same look"}}),
      service("Ringdesk", "Call centre software", {{"Queue Call", "Route a caller to an agent"}}),
      service("Licencely", "Software licence keys", {{"Check Licence", "Whether a key is valid"}}),
      service("Fibrenet", "Fibre broadband availability", {{"Coverage", "Fibre at an address"}}),
  });
  const auto first = [&](const std::string& query) {
    const auto hits = index.search(query);
    return hits.empty() ? std::pair<std::string, double>{}
                        : std::pair{hits[0].definition->service_name, hits[0].score};
  };
  for (const auto& [british, american, expected] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"colour palette", "color palette", "Palettely"},
           {"optimise my images", "optimize my images", "Squeezer"},
           {"image optimisation", "image optimization", "Squeezer"},
           {"call centre", "call center", "Ringdesk"},
           {"software licence", "software license", "Licencely"},
           {"fibre coverage", "fiber coverage", "Fibrenet"}}) {
    const auto uk = first(british);
    const auto us = first(american);
    EXPECT_EQ(uk.first, expected) << british;
    EXPECT_EQ(us.first, expected) << american;
    EXPECT_NEAR(uk.second, us.second, 1e-5) << british << " / " << american;
  }
}

// Two words of a request that the registry writes as one are that word ("back up": backup,
// "web hook": webhook), the second a stop word or not.
TEST(Search, TwoWordsTheRegistryWritesAsOne) {
  SearchIndex index({
      service("Vaultly", "Photo backup to the cloud", {{"Backup Photos", "Copies every photo"}}),
      service("Backroads", "Scenic back roads for a drive", {{"Find Roads", "Roads to drive"}}),
      service("Hooksmith", "Webhook delivery with retries", {{"Send Webhook", "POST an event"}}),
      service("Webpress", "Web pages from templates", {{"Render Page", "A page of the web"}}),
  });
  EXPECT_EQ(first(index, "back up my photos"), "Vaultly");
  EXPECT_EQ(first(index, "retry a failed web hook"), "Hooksmith");
  // The joined word counts for both words: the service is as relevant as for "backup photos".
  const auto joined = index.search("backup photos");
  ASSERT_FALSE(joined.empty());
  const auto hits = index.search("back up photos");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].definition->service_name, "Vaultly");
  EXPECT_NEAR(hits[0].score, joined[0].score, 1e-5);
  // Not after an article: "a long report" is not "along".
  SearchIndex article({
      service("Shortlink", "Shorten long links", {{"Shorten", "A short link for a long one"}}),
      service("Alongside", "Walk along a route", {{"Along", "Points along a route"}}),
  });
  EXPECT_EQ(reach(article, "a long report", "long", "joined"), 0);
  EXPECT_EQ(first(article, "a long report"), "Shortlink");
  // And the other way: a word of the request the registry writes as two.
  SearchIndex two({
      service("Clockwise", "Time zone of a place", {{"Zone Of", "The time zone at a point"}}),
      service("Timesheet", "Hours worked", {{"Log Time", "Time spent on a task"}}),
  });
  const auto split = two.search("timezone lookup");
  ASSERT_FALSE(split.empty());
  EXPECT_EQ(split[0].definition->service_name, "Clockwise");
  ASSERT_FALSE(split[0].capabilities.empty());
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

/// A registry where the request's words are not the definitions' words, and where places and
/// brands appear in service names.
std::vector<std::shared_ptr<const Definition>> everyday() {
  return {
      service("Skycast", "Hourly forecasts and current conditions anywhere",
              {{"Forecast", "Weather for the next days: temperature, rain and wind"}}),
      service("Exchangerate Hub", "Foreign exchange rates for 170 currencies",
              {{"Latest Rates", "Current currency conversion rates"}}),
      service("Airwatch", "Air quality index and pollution measurements",
              {{"Air Quality", "Pollution levels from monitoring stations"}}),
      service("Equity Feed", "Stock market prices and company fundamentals",
              {{"Stock Quote", "Last traded stock price for a ticker"}}),
      service("Phoenix Open Data", "City of Phoenix datasets: permits, budgets and parks",
              {{"Datasets", "Search the city's published datasets"}}),
      service("CineBase", "Movie and television database with cast and ratings",
              {{"Movie Search", "Find movies by title"}}),
      service("Transit Phoenix", "Bus and light rail departures in the Phoenix area",
              {{"Departures", "Next departures from a stop"}}),
  };
}

TEST(Search, MisspeltWordsFindTheRegistrysWord) {
  SearchIndex index(everyday());
  EXPECT_EQ(first(index, "wheather for lisbon"), "Skycast");
  EXPECT_EQ(first(index, "curency rates"), "Exchangerate Hub");
  // Only a word that matches nothing is corrected.
  EXPECT_GT(reach(index, "curency rates", "curency", "spelling"), 0);
  for (const auto& w : index.interpret("stock rates")) {
    for (const auto& t : w.terms) EXPECT_NE(t.via, "spelling") << w.word;
  }
}

// Of the registry's words equally close to a misspelt one, those it writes less often than the
// most frequent count less: "spce" is more likely "space" than "spec".
TEST(Search, AMisspeltWordIsMoreLikelyTheRegistrysMoreFrequentWord) {
  SearchIndex index({
      service("Crewcount", "People in space", {{"Crew", "Astronauts in space, by space station"}}),
      service("Spec Garage", "API spec hosting", {{"Host", "Host an OpenAPI file"}}),
  });
  EXPECT_NEAR(reach(index, "spce", "spce", "spelling", "space"), 1.0, 1e-6);
  EXPECT_NEAR(reach(index, "spce", "spce", "spelling", "spec"), 0.7, 1e-6);
  EXPECT_EQ(first(index, "who is up in spce"), "Crewcount");
  // So with the dictionary's words, for a word the registry has nothing one edit from: WordNet's
  // tagged corpus met "saying" (as "say") more often than "spying".
  SearchIndex quotes({
      service("Quotebook", "What famous people say", {{"Quote", "A quote by a person"}}),
      service("Spyglass", "Spy on the prices of competitors", {{"Track", "Prices of a product"}}),
  });
  EXPECT_NEAR(reach(quotes, "ssying", "ssying", "spelling", "say"), 1.0, 1e-6);
  EXPECT_NEAR(reach(quotes, "ssying", "ssying", "spelling", "spi"), 0.7, 1e-6);
}

TEST(Search, AMisspeltLemmaFindsTheRegistrysInflectedWord) {
  // The registry writes only "prettifying"; "prettfy" is one edit from its lemma, "prettify",
  // which WordNet gives for it and whose stem is the registry's term.
  SearchIndex index({service("Formline", "JSON and YAML prettifying", {{"Format", "Formats it"}}),
                     service("Pixelry", "Photo editing", {{"Crop", "Crop a photo"}})});
  EXPECT_EQ(first(index, "prettfy this json"), "Formline");
  EXPECT_GT(reach(index, "prettfy", "prettfy", "spelling", "prettifi"), 0);
  // A plural WordNet does not know ("favicons") is corrected to by its singular's misspelling
  // ("fvicon", two edits from the plural, one from "favicon").
  SearchIndex icons({service("Icon Horse", "Favicons for any website", {{"Icon", "Get it"}}),
                     service("Grab", "Rides and deliveries", {{"Grab", "Track a ride"}})});
  EXPECT_GT(reach(icons, "fvicon", "fvicon", "spelling", "favicon"), 0);
  EXPECT_EQ(first(icons, "grab the fvicon of a website"), "Icon Horse");
}

// A misspelt word means what its correction means: the correction's related words join the
// group too ("ppems": poem, and the curated vocabulary's "poetry"), at the correction's weight.
TEST(Search, AMisspeltWordMeansWhatItsCorrectionMeans) {
  SearchIndex index({
      service("Versebook", "Poetry of every age", {{"Verses", "Poetry by author and title"}}),
      service("Poemday", "A poem a day", {{"Today", "The poem of the day"}}),
      service("Pixelry", "Photo editing", {{"Crop", "Crop a photo"}}),
  });
  EXPECT_GT(reach(index, "ppems by author", "ppems", "spelling", "poem"), 0);
  EXPECT_FLOAT_EQ(reach(index, "ppems by author", "ppems", "spelling", "poetri"),
                  1.0F * 0.5F);  // one edit (in full), then the curated vocabulary
  EXPECT_EQ(first(index, "ppems by author"), "Versebook");
}

// A word the registry has nothing close to may be a misspelling of one it lacks but WordNet or
// the curated vocabulary know: "kirty" is one edit from "kitty", a cat. The first letter is
// kept, as typing seldom misses it: "yeet" is no misspelt "meet".
TEST(Search, AMisspellingOfAWordTheRegistryLacksFindsItsMeaning) {
  SearchIndex index({
      service("Catpics", "Random cat pictures for your apps, by breed and with tags",
              {{"Cat", "A random cat picture, by breed and with tags"}}),
      service("Picbox", "Pictures", {{"Pictures", "Pictures"}}),
      service("Gatherly", "Local events calendar", {{"Events", "Events near you"}}),
      service("Pixelry", "Photo editing", {{"Crop", "Crop a photo"}}),
      service("Birdsong", "Songbird calls", {{"Songbirds", "Calls of a songbird"}}),
  });
  EXPECT_GT(reach(index, "kirty pictures", "kirty", "spelling", "cat"), 0);
  // Nor is a kind of animal or plant WordNet's tagged corpus never met: "wheaterr" is no
  // misspelt "wheatear", a songbird (it is "weather", three edits away: beyond what is
  // corrected). A common word that corpus missed is one still ("sunrize": sunrise, dawn).
  EXPECT_EQ(reach(index, "wheaterr", "wheaterr", "spelling", "songbird"), 0);
  SearchIndex dawn({service("Dawnwatch", "Dawn and dusk times", {{"Times", "Dawn by city"}}),
                    service("Picbox", "Pictures", {{"Pictures", "Pictures"}})});
  EXPECT_GT(reach(dawn, "sunrize", "sunrize", "spelling", "dawn"), 0);
  EXPECT_EQ(first(index, "kirty pictures"), "Catpics");
  // "meet" reaches events, through the curated vocabulary and WordNet.
  EXPECT_GT(reach(index, "meeet new people", "meeet", "spelling", "event"), 0);
  EXPECT_EQ(reach(index, "what does yeet mean", "yeet", "spelling", "event"), 0);
}

TEST(Search, AWordWordNetKnowsIsCorrectedOrSplitAtHalfWeight) {
  // "aloud" matches nothing here and is one edit from "cloud"; being a word itself, it is
  // seldom a misspelling of "cloud", so the correction counts half of a misspelt word's (1 for
  // one edit: "clowd" is no word, and means what "cloud" does).
  SearchIndex index({service("Nimbus Drive", "Cloud file storage", {{"Upload", "Store a file"}}),
                     service("Pixelry", "Photo editing", {{"Crop", "Crop a photo"}})});
  EXPECT_FLOAT_EQ(reach(index, "shout aloud", "aloud", "spelling", "cloud"), 0.5F);
  EXPECT_FLOAT_EQ(reach(index, "clowd backup", "clowd", "spelling", "cloud"), 1.0F);
  // The same for a word the registry has only as two: "outside" is seldom "out side", where
  // "timezone" is "time zone" (0.8). A pronoun WordNet lacks ("everyone") is no word at all.
  SearchIndex two({service("Sidecar", "Side dishes to take out", {{"Order", "Order a side"}}),
                   service("Clockwise", "Time zone of a place", {{"Zone", "The time zone"}})});
  EXPECT_FLOAT_EQ(reach(two, "outside", "outside", "split"), 0.4F);
  EXPECT_FLOAT_EQ(reach(two, "timezone", "timezone", "split"), 0.8F);
  EXPECT_EQ(reach(two, "everyone", "everyone", "split"), -1.0);
}

TEST(Search, WordNetRelatesTheRequestsWordsBelowTheWordsThemselves) {
  SearchIndex index(everyday());
  EXPECT_EQ(first(index, "how bad is the smog today"), "Airwatch");
  EXPECT_EQ(first(index, "price of my shares"), "Equity Feed");
  EXPECT_EQ(first(index, "a film with good reviews"), "CineBase");
  // A related word counts less than the word itself.
  SearchOptions options;
  options.explain = true;
  const auto related = index.search("film", options);
  ASSERT_FALSE(related.empty());
  ASSERT_EQ(related[0].capabilities[0].matches.size(), 1U);
  const auto& m = related[0].capabilities[0].matches[0];
  EXPECT_EQ(m.term, "movi");
  EXPECT_EQ(m.via, "wordnet synonym");
  EXPECT_LT(m.weight, 1.0);
}

TEST(Search, ACapitalisedWordWordNetHasOnlyInRareSensesIsAName) {
  SearchIndex index(everyday());
  const auto read_as_name = [&](const std::string& request, const std::string& word) {
    for (const auto& w : index.interpret(request)) {
      if (w.word == word) return w.name;
    }
    return false;
  };
  // "anna" is in WordNet only as a coin its tagged corpus never met: written with a capital
  // inside a request, it is someone's name; "Weather" is a word in use.
  EXPECT_TRUE(read_as_name("did Anna reply to my mail", "anna"));
  EXPECT_FALSE(read_as_name("did anna reply to my mail", "anna"));
  EXPECT_FALSE(read_as_name("check the Weather today", "weather"));
  EXPECT_FALSE(read_as_name("Safari keeps crashing", "safari"));  // the request's first word
  // Nor does such a name reach what WordNet says of the word: a coin service for "Anna".
  auto defs = everyday();
  defs.push_back(service("Numista", "Old coin catalogue", {{"Coins", "Find a coin by country"}}));
  SearchIndex coins(defs);
  const auto reaches_coins = [&](const std::string& request) {
    for (const auto& w : coins.interpret(request)) {
      if (w.word == "anna") return !w.terms.empty();
    }
    return false;
  };
  EXPECT_FALSE(reaches_coins("did Anna reply to my mail"));
  EXPECT_TRUE(reaches_coins("price of an anna"));
}

TEST(Search, APlaceCountsLessThanTheTaskUnlessItNamesTheService) {
  SearchIndex index(everyday());
  EXPECT_EQ(first(index, "weather forecast in Phoenix"), "Skycast");
  EXPECT_EQ(first(index, "forecast for phoenix tomorrow"), "Skycast");
  bool name = false;
  for (const auto& w : index.interpret("weather in Phoenix")) {
    name = name || (w.word == "phoenix" && w.name);
  }
  EXPECT_TRUE(name);
  // A place of two words is a name, both its words; neither is one alone.
  const auto names = [&](std::string_view query) {
    std::vector<std::string> out;
    for (const auto& w : index.interpret(query)) {
      if (w.name) out.push_back(w.word);
    }
    return out;
  };
  EXPECT_EQ(names("weather in sao paulo"), (std::vector<std::string>{"sao", "paulo"}));
  EXPECT_EQ(names("hotels in new york"), (std::vector<std::string>{"new", "york"}));
  EXPECT_EQ(names("new hotels"), std::vector<std::string>{});
  // A place reaches the regions that hold it: the service of Vienna's country ranks first.
  SearchIndex rail({service("Bahnline", "Train departures across Switzerland",
                            {{"Departures", "Next trains from a station"}}),
                    service("Zugline", "Train departures across Austria",
                            {{"Departures", "Next trains from a station"}})});
  EXPECT_EQ(first(rail, "train departures in vienna"), "Zugline");
  // The request names the service: the name counts in full.
  EXPECT_EQ(first(index, "Phoenix Open Data datasets"), "Phoenix Open Data");
  EXPECT_EQ(first(index, "bus departures Transit Phoenix"), "Transit Phoenix");
}

// A period after "this", "next", "last" or "every" says when, as a weekday does: it counts like
// a name, and is not expanded. Alone ("week planner") it is a word like any other.
TEST(Search, APeriodAfterThisOrNextSaysWhen) {
  SearchIndex index({
      service("Holidayly", "Public holidays by country",
              {{"Holidays", "The public holidays of a country"}}),
      service("Weekplan", "Plan your week", {{"Week", "Tasks for the week ahead"}}),
      service("Skyview", "Forecasts", {{"Forecast", "Weather forecasts"}}),
      service("NextRide", "Next departures", {{"Next", "The next departures of a bus stop"}}),
      service("Calendly", "Calendar", {{"Events", "The events on a calendar"}}),
  });
  const auto names = [&](std::string_view query) {
    std::vector<std::string> out;
    for (const auto& w : index.interpret(query)) {
      if (w.name) out.push_back(w.word);
    }
    return out;
  };
  EXPECT_EQ(names("holidays next week"), (std::vector<std::string>{"next", "week"}));
  EXPECT_EQ(names("every year"), (std::vector<std::string>{"every", "year"}));
  EXPECT_EQ(names("week planner"), std::vector<std::string>{});
  EXPECT_EQ(first(index, "public holidays next week"), "Holidayly");
  EXPECT_EQ(first(index, "holidays this week"), "Holidayly");
  EXPECT_EQ(first(index, "a planner for my week"), "Weekplan");
  // The word before a period or a word of time says when too ("next friday", "last night").
  EXPECT_EQ(names("calendar next week"), (std::vector<std::string>{"next", "week"}));
  EXPECT_EQ(names("forecast for next friday"), (std::vector<std::string>{"next", "friday"}));
  EXPECT_EQ(names("forecast for last night"), (std::vector<std::string>{"last", "night"}));
  EXPECT_EQ(names("next bus"), std::vector<std::string>{});
  EXPECT_EQ(first(index, "what's on my calendar next week"), "Calendly");
  EXPECT_EQ(first(index, "weather forecast for next friday"), "Skyview");
  EXPECT_EQ(first(index, "next bus"), "NextRide");
}

// A request that names a service asks for it: its name counts more than a word of the task,
// which another service's texts may say more of.
TEST(Search, ARequestThatNamesAServiceAsksForIt) {
  SearchIndex index({
      service("Dropbox", "Cloud storage", {{"Upload", "Store a file in a folder"}}),
      service("Filestack", "File uploads for apps",
              {{"Upload Files", "Upload files from your app to a bucket"}}),
  });
  EXPECT_EQ(first(index, "upload files to Dropbox from my app"), "Dropbox");
  EXPECT_EQ(first(index, "upload files from my app"), "Filestack");
}

// WordNet's relations come from the senses of the part of speech the request uses a word in,
// where its neighbours say: "book" reserves as a verb ("book a table"), not as a noun ("find a
// book", "how to book" aside).
TEST(Search, AWordRelatesThroughThePartOfSpeechItIsUsedIn) {
  SearchIndex index({
      service("Tablehop", "Reserve a table", {{"Reserve", "Reserve a table at a restaurant"}}),
      service("Shelf", "Books and reviews", {{"Books", "Books by title"}}),
  });
  EXPECT_GT(reach(index, "book a table", "book", "wordnet synonym", "reserv"), 0);
  EXPECT_GT(reach(index, "how to book a table", "book", "wordnet synonym", "reserv"), 0);
  EXPECT_EQ(reach(index, "find a book", "book", "wordnet synonym", "reserv"), 0);
  EXPECT_EQ(reach(index, "my book", "book", "wordnet synonym", "reserv"), 0);
  // Where the neighbours do not say, every part of speech.
  EXPECT_GT(reach(index, "book tables", "book", "wordnet synonym", "reserv"), 0);
}

// A word of time says when, even where a service is called by it: "open on monday" is no
// request for Monday, a work planner, whose name would otherwise count in full.
TEST(Search, AWordOfTimeNamesNoService) {
  SearchIndex index({
      service("Monday", "Read and update the data of a monday.com account",
              {{"Boards", "Read and update boards and items"}}),
      service("Museo", "Art collections", {{"Objects", "The objects of a museum's collection"}}),
  });
  EXPECT_EQ(first(index, "is the museum open on monday"), "Museo");
  EXPECT_EQ(first(index, "is the museum open on Monday"), "Museo");
  EXPECT_EQ(first(index, "monday boards"), "Monday");
}

// A word spelt as another real word is no misspelling by the spelling index's measure; with its
// neighbour it may still make a noun WordNet has only as the word meant.
TEST(Search, ARealWordMisreadInANounOfTwoWordsIsThatNoun) {
  SearchIndex index({
      service("Trialist", "Clinical trials search by condition and phase",
              {{"Search", "Clinical trials recruiting for a condition"}}),
      service("Typewriter", "Typing animation SVG for a readme, of any type",
              {{"Render", "An SVG of text typed out, by font type and speed"}}),
      service("Trailhead", "Hiking trails and trail maps",
              {{"Trails", "Hiking trails near a place"}}),
  });
  EXPECT_EQ(first(index, "clinical trails for type 2 diabetes"), "Trialist");
  EXPECT_GT(reach(index, "clinical trails for type 2 diabetes", "trails", "spelling", "trial"),
            0.9);
  // Words that make no noun together as written or misread stay as they are.
  EXPECT_EQ(first(index, "hiking trails"), "Trailhead");
  EXPECT_EQ(reach(index, "hiking trails", "trails", "spelling"), 0);
  EXPECT_EQ(first(index, "clinical trials"), "Trialist");
}

// A misspelt word of time or place is one still: "tooday" says when and "bacelona" where, as
// the words spelt right do, and neither is the task.
TEST(Search, AMisspeltWordOfTimeOrPlaceIsOneStill) {
  SearchIndex index({
      service("Truckstop Eats", "Where food trucks are parked today",
              {{"Trucks", "Where food trucks are parked today"}}),
      service("Breathe Index", "Pollution forecasts", {{"Pollution", "Smog and ozone forecasts"}}),
      service("Barcelona Flats", "Licensed tourist flats in Barcelona",
              {{"Flats", "Tourist flats of Barcelona"}}),
      service("Cabinly", "Vacation rentals",
              {{"Rentals", "Cabins, villas and apartments to rent"}}),
  });
  const auto word = [&](std::string_view request, std::string_view w) {
    for (auto& q : index.interpret(request)) {
      if (q.word == w) return q;
    }
    return QueryWord{};
  };
  EXPECT_TRUE(word("smog outside today", "today").name);
  EXPECT_TRUE(word("smog outside tooday", "tooday").name);
  EXPECT_EQ(first(index, "is the smog bad outside tooday"), "Breathe Index");
  const auto place = word("bacelona apartment rental", "bacelona");
  EXPECT_TRUE(place.name);
  EXPECT_TRUE(place.place);
  EXPECT_EQ(first(index, "bacelona apartment rental for a week"), "Cabinly");
  // A misspelt word of neither kind is the task, as before.
  EXPECT_FALSE(word("smog outside tooday", "smog").name);
  EXPECT_FALSE(word("rentl a flat", "rentl").name);
}

// A service whose texts name only places other than the request's counts less: a jobs board
// for Germany is not asked for jobs in Nairobi, but is for jobs in Munich; a service naming
// places with nothing in common (time zones from London to Tokyo) works anywhere.
TEST(Search, AServiceOfAnotherPlaceCountsLess) {
  SearchIndex index({
      service("Berlin Tech Jobs", "Software and startup positions across Germany",
              {{"Tech Listings", "Developer and product jobs at startups in German cities"}}),
      service("Jobhound", "Job listings search by keyword, location and salary",
              {{"Search Jobs", "Open positions at companies and startups by title and city"}}),
      service("Zonewise", "Time zones of the world",
              {{"Local Time", "The time in any city, from London to Tokyo, for a job interview"}}),
  });
  EXPECT_EQ(first(index, "jobs at startups"), "Berlin Tech Jobs");
  EXPECT_EQ(first(index, "jobs at startups in munich"), "Berlin Tech Jobs");
  EXPECT_EQ(first(index, "jobs at startups in Europe"), "Berlin Tech Jobs");
  EXPECT_EQ(first(index, "jobs at startups in nairobi"), "Jobhound");
  SearchOptions options;
  options.explain = true;
  const auto hits = index.search("jobs at startups in nairobi", options);
  double berlin = -1;
  double zonewise = -1;
  for (const auto& h : hits) {
    if (h.definition->service_name == "Berlin Tech Jobs") {
      EXPECT_TRUE(h.elsewhere);
      berlin = h.score;
    }
    if (h.definition->service_name == "Zonewise") {
      EXPECT_FALSE(h.elsewhere);
      zonewise = h.score;
    }
    if (h.definition->service_name == "Jobhound") {
      EXPECT_FALSE(h.elsewhere);
    }
  }
  EXPECT_GT(berlin, 0);
  EXPECT_GT(zonewise, 0);
  const auto plain = index.search("jobs at startups in munich", options);
  ASSERT_FALSE(plain.empty());
  EXPECT_FALSE(plain[0].elsewhere);
  const auto response = registry_response(hits);
  bool marked = false;
  for (const auto& s : response.at("services").get_array()) {
    marked = marked || (s.at("name") == json::value("Berlin Tech Jobs") &&
                        s.at("elsewhere") == json::value(true));
  }
  EXPECT_TRUE(marked);
  EXPECT_EQ(places(index, "jobs in sao paulo or nairobi"),
            (std::vector<std::string>{"sao", "paulo", "nairobi"}));
  // The adjective of a place stands for it; a language's does not.
  EXPECT_EQ(places(index, "canadian jobs for english teachers"),
            std::vector<std::string>{"canadian"});
  // A place in the service's name counts as one in its texts.
  SearchIndex radio({service("Dublin Radio", "Community radio stations streaming online",
                             {{"Stations", "Radio stations and their streams"}}),
                     service("Airwaves", "Internet radio directory",
                             {{"Find Stations", "Radio stations by genre and country"}})});
  EXPECT_EQ(first(radio, "radio stations"), "Dublin Radio");
  EXPECT_EQ(first(radio, "radio stations in brazil"), "Airwaves");
  EXPECT_EQ(first(radio, "radio stations in ireland"), "Dublin Radio");
}

TEST(Search, APlaceIsNamedByItsOtherNames) {
  SearchIndex index({
      service("Aardvark Metro", "Delays in subway lines", {{"Delays", "Delays in subway lines"}}),
      service("Metro Lisboa", "Delays in subway lines", {{"Delays", "Delays in subway lines"}}),
  });
  EXPECT_EQ(reach(index, "subway delays in lisbon", "lisbon", "wordnet synonym", "lisboa"), 1.0);
  EXPECT_EQ(first(index, "subway delays in lisbon"), "Metro Lisboa");
  EXPECT_EQ(first(index, "subway delays"), "Aardvark Metro");
}

// A country's acronym that no text can match as a word ("us" is a stop word) matches the
// services whose texts name that country, or a place in it, as a weak word would.
TEST(Search, ACountrysAcronymMatchesTheServicesOfThatCountry) {
  SearchIndex index({
      service("Zebu", "Job board of the US states", {{"Jobs", "Job board of the US states"}}),
      service("Pelican", "Job board of companies", {{"Jobs", "Job board of companies"}}),
      service("Quokka", "Job board of France", {{"Jobs", "Job board of France"}}),
      service("Skycast", "Weather forecasts", {{"Forecast", "Hourly weather forecast"}}),
  });
  EXPECT_EQ(first(index, "US job board"), "Zebu");
  EXPECT_EQ(first(index, "job board"), "Pelican");  // the same scores: by name
  SearchOptions options;
  options.explain = true;
  const auto hits = index.search("US job board", options);
  ASSERT_FALSE(hits.empty());
  bool place = false;
  for (const auto& m : hits[0].capabilities.at(0).matches) {
    if (m.word == "us") {
      place = m.via == "place" && m.score > 0;
    }
  }
  EXPECT_TRUE(place);
  for (const auto& h : hits) {
    if (h.definition->service_name == "Pelican") {
      for (const auto& m : h.capabilities.at(0).matches) EXPECT_NE(m.word, "us");
    }
  }
}

TEST(Search, ACountrysAcronymInCapitalsNamesIt) {
  SearchIndex index({
      service("Postbox", "Postcode lookup and geolocation for the UK",
              {{"Lookup", "Postcode lookup and geolocation for the UK"}}),
      service("Zipline", "Validate and append data for any US zip code",
              {{"Lookup", "Validate and append data for any US zip code"}}),
      service("Cepa", "Zip code search for Brazil", {{"Lookup", "Street and city of a zip code"}}),
      service("Idgen", "Random ID and OK or error status codes for tests",
              {{"Codes", "Random ID and zip codes for tests"}}),
  });
  const auto elsewhere = [&](std::string_view query, std::string_view name) {
    SearchOptions options;
    options.explain = true;
    for (const auto& h : index.search(query, options)) {
      if (h.definition->service_name == name) return h.elsewhere;
    }
    return false;
  };
  // The services' texts: "for the UK" and "US zip code" say where they work; a state's
  // acronym that is a word ("ID", "OK") says nothing of the kind.
  EXPECT_TRUE(elsewhere("brazilian zip code lookup", "Postbox"));
  EXPECT_TRUE(elsewhere("brazilian zip code lookup", "Zipline"));
  EXPECT_FALSE(elsewhere("brazilian zip code lookup", "Idgen"));
  EXPECT_EQ(first(index, "brazilian zip code lookup"), "Cepa");
  // A request's: "US" names the country, in capitals only ("us" is no place).
  EXPECT_EQ(places(index, "zip code lookup in the US"), std::vector<std::string>{"us"});
  EXPECT_EQ(places(index, "USA zip code lookup"), std::vector<std::string>{"usa"});
  EXPECT_TRUE(places(index, "send us a zip code").empty());
  EXPECT_TRUE(places(index, "ID codes, OK").empty());
  EXPECT_TRUE(elsewhere("zip code lookup in the US", "Cepa"));
  EXPECT_FALSE(elsewhere("zip code lookup in the US", "Zipline"));
  EXPECT_EQ(first(index, "zip code lookup in the US"), "Zipline");
}

// The curated vocabulary (thesaurus.txt) reads phrases of neighbouring words, stop words
// between them left out: "text to speech" and "space station" name tasks that their words alone
// do not.
TEST(Search, TheCuratedVocabularyReadsPhrasesOfTheRequest) {
  SearchIndex index({
      service("Voxly", "Natural TTS voices for apps",
              {{"Synthesize", "Turn a script into an MP3 with a chosen voice"}}),
      service("Orbitline", "Where the ISS is over the earth",
              {{"ISS Position", "Latitude and longitude of the ISS"}}),
      service("Planet Facts", "Mass, moons and distance of the planets",
              {{"Planet", "Facts about one planet"}}),
  });
  EXPECT_EQ(first(index, "turn this text into speech"), "Voxly");
  EXPECT_EQ(first(index, "where is the space station"), "Orbitline");
  SearchOptions options;
  options.explain = true;
  const auto hits = index.search("text to speech", options);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].definition->service_name, "Voxly");
  bool curated = false;
  for (const auto& m : hits[0].capabilities[0].matches) {
    curated = curated || (m.word == "speech" && m.via == "synonym table");
  }
  EXPECT_TRUE(curated);
  // The words alone are not the phrase.
  EXPECT_TRUE(index.search("speech").empty());
  EXPECT_TRUE(index.search("station").empty());
}

// One word of the request is one piece of evidence. The curated vocabulary relates "game" to
// "video" ("gaming": video game); when the request says "video" itself, that expansion would
// count the word twice, for every film service.
// A quoted phrase of the curated vocabulary is read with its stop words ("how cold", "things
// to do"): what a question or a phrasal verb asks, which its content word alone does not say.
// The phrase is an idiom: its word counts for the phrase's meaning, not for itself.
TEST(Search, AQuotedPhraseReadsTheRequestsStopWordsToo) {
  SearchIndex index({
      service("Skyview", "Weather forecasts", {{"Forecast", "Temperature and rain by the hour"}}),
      service("Cold Storage", "Cold storage for files", {{"Archive", "Keep files cold"}}),
      service("Stranger Things Quotes", "Quotes from the series",
              {{"Quote", "Returns Stranger Things quotes"}}),
      service("Wayfarer", "Attractions and activities",
              {{"Attractions", "Tourist attractions and activities of a city"}}),
  });
  EXPECT_EQ(first(index, "how cold is it in oslo"), "Skyview");
  EXPECT_EQ(first(index, "cold storage for old files"), "Cold Storage");
  EXPECT_EQ(first(index, "things to do in oslo"), "Wayfarer");
  EXPECT_EQ(first(index, "stranger things quotes"), "Stranger Things Quotes");
  // The phrase's words must be neighbours, as written.
  EXPECT_NEAR(reach(index, "how cold is it", "cold", "synonym table", "weather"), 0.6, 1e-6);
  EXPECT_EQ(reach(index, "how is it cold", "cold", "synonym table", "weather"), 0);
  EXPECT_EQ(reach(index, "things to do", "things", "word"), 0);
  EXPECT_EQ(reach(index, "things to quote", "things", "word"), 1);
}

// A misspelt word of a curated phrase still makes the phrase ("text to speach", "how cld is
// it"), and keeps its corrections toward the registry's words; a word spelt right, or one the
// registry has, is read as it is.
TEST(Search, AMisspeltWordOfACuratedPhraseMakesThePhrase) {
  SearchIndex index({
      service("Voxly", "Natural TTS voices for apps",
              {{"Synthesize", "Turn a script into an MP3 with a chosen voice"}}),
      service("Skyview", "Weather forecasts", {{"Forecast", "Temperature and rain by the hour"}}),
      service("Cold Storage", "Cold storage for files", {{"Archive", "Keep files cold"}}),
      service("Open Mic Nights", "Bars with free speech nights", {{"Bars", "Bars by city"}}),
  });
  EXPECT_EQ(first(index, "text to speech"), "Voxly");
  EXPECT_EQ(first(index, "text to speach"), "Voxly");
  EXPECT_GT(reach(index, "text to speach", "speach", "synonym table", "tts"), 0);
  // Its correction toward the registry's word stays ("speach": speech).
  EXPECT_GT(reach(index, "text to speach", "speach", "spelling", "speech"), 0);
  // A quoted phrase too, an idiom as when spelt right: its word counts for the phrase only.
  EXPECT_GT(reach(index, "how colld is it", "colld", "synonym table", "weather"), 0);
  EXPECT_EQ(reach(index, "how colld is it", "colld", "spelling", "cold"), 0);
  EXPECT_EQ(first(index, "how colld is it in oslo"), "Skyview");
  // No phrase without the misspelling's neighbour.
  EXPECT_EQ(reach(index, "speach", "speach", "synonym table", "tts"), 0);
  // A word too short to correct by its stem ("wods": "wod") takes the first of the registry's
  // closest words that is a phrase's word ("mods" or "words": "word").
  SearchIndex words({
      service("Wordhoard", "Thesaurus lookups", {{"Synonyms", "Words with the same meaning"}}),
      service("Emoji Finder", "Emoji search", {{"Emoji", "Emoji for a word such as happy"}}),
      service("Modshop", "Game mods", {{"Mods", "Download mods for a game"}}),
  });
  EXPECT_GT(reach(words, "other wods for happy", "wods", "synonym table", "synonym"), 0);
  EXPECT_EQ(first(words, "other wods for happy"), "Wordhoard");
  // The phrase says which of the closest corrections the word is: "stok prices" is "stock",
  // not "stop" nor the "tok" of TikTok.
  SearchIndex stocks({
      service("TikTok", "Videos posted on TikTok", {{"Posts", "A user's videos"}}),
      service("Stopwatch", "Timers", {{"Stop", "Stop a running timer"}}),
      service("Tickerfeed", "Stock quotes", {{"Quote", "Latest stock price of a ticker"}}),
  });
  EXPECT_GT(reach(stocks, "stok", "stok", "spelling", "tok"), 0);
  EXPECT_EQ(reach(stocks, "stok prices", "stok", "spelling", "tok"), 0);
  EXPECT_GT(reach(stocks, "stok prices", "stok", "spelling", "stock"), 0);
  EXPECT_EQ(first(stocks, "stok prices for tesla"), "Tickerfeed");
  // A word the registry has nothing one edit from takes the first of the dictionary's words
  // one edit away whose stem is a phrase's word ("ssying": saying, spying or staying; "people
  // saying" asks for mentions).
  SearchIndex mentions({
      service("Earshot", "Social listening", {{"Mentions", "Brand mentions across the web"}}),
      service("Brandkit", "Brand assets", {{"Logos", "Logos and colours of a brand"}}),
  });
  EXPECT_GT(reach(mentions, "people saying", "saying", "synonym table", "mention"), 0);
  EXPECT_GT(reach(mentions, "people ssying", "ssying", "synonym table", "mention"), 0);
  EXPECT_EQ(first(mentions, "what are people ssying about our brand"), "Earshot");
}

// A misspelt stop word ("whhich") is read as that stop word: it makes the quoted phrases it is
// a word of ("which bin": recycling), and is no word of the request of its own. A word one edit
// from a word of the registry's as well ("mony": money or many) is left to its correction.
TEST(Search, AMisspeltStopWordIsThatStopWord) {
  SearchIndex index({
      service("Binwise", "Recycling rules", {{"Sort", "Which waste goes in which recycling bin"}}),
      service("Binshop", "Bins for sale", {{"Order", "Order a new bin"}}),
      service("Moneyline", "Money transfers", {{"Send", "Send money abroad"}}),
  });
  EXPECT_GT(reach(index, "which bin for a pizza box", "bin", "synonym table", "recycl"), 0);
  EXPECT_GT(reach(index, "whhich bin for a pizza box", "bin", "synonym table", "recycl"), 0);
  EXPECT_EQ(reach(index, "whhich bin for a pizza box", "whhich", "word"), -1);
  EXPECT_EQ(first(index, "which bin for a pizza box"), "Binwise");
  EXPECT_EQ(first(index, "whhich bin for a pizza box"), "Binwise");
  EXPECT_GT(reach(index, "send mony abroad", "mony", "spelling", "money"), 0);
}

// A word in capitals throughout is the acronym WordNet writes so: "RAM" is memory, not to ram
// (drive, down); in lower case, or with every word in capitals, the word's own senses.
TEST(Search, AnAcronymInCapitalsMeansWhatWordNetWritesInCapitals) {
  SearchIndex index({
      service("Drivebox", "File storage", {{"Drive", "A drive for your files"}}),
      service("Specsheet", "Phone specifications",
              {{"Specs", "Memory, storage and screen of phones"}}),
  });
  EXPECT_EQ(reach(index, "how much RAM does my phone have", "ram", "wordnet synonym", "drive"), 0);
  EXPECT_GT(reach(index, "how much RAM does my phone have", "ram", "wordnet synonym", "memori"), 0);
  EXPECT_GT(reach(index, "ram the gate", "ram", "wordnet synonym", "drive"), 0);
  EXPECT_GT(reach(index, "RAM THE GATE", "ram", "wordnet synonym", "drive"), 0);
  EXPECT_EQ(first(index, "how much RAM does my phone have"), "Specsheet");
}

// A word of a curated phrase is spelt as the phrase has it: "flip", which the registry lacks,
// is no misspelt "slip" in "flip a coin".
TEST(Search, AWordOfACuratedPhraseIsNotCorrected) {
  SearchIndex index({
      service("Advice Slip", "Random advice slips", {{"Slip", "One slip of advice"}}),
      service("Headsup", "Random coin and dice results", {{"Coin", "Heads or tails"}}),
  });
  EXPECT_GT(reach(index, "flip the page", "flip", "spelling"), 0);  // corrected alone
  EXPECT_EQ(reach(index, "flip a coin", "flip", "spelling"), 0);
}

TEST(Search, AnotherWordsExpansionDoesNotCountARequestWordTwice) {
  SearchIndex index({
      service("Reelbase", "Movies", {{"Video", "Movies"}}),
      service("Questdex", "500,000+ games for 50 platforms including mobiles",
              {{"Games", "500,000+ games for 50 platforms including mobiles"}}),
      service("Clipcut", "Video editing", {{"Trim", "Trim a video clip"}}),
      service("Skyview", "Forecasts", {{"Forecast", "Weather forecasts"}}),
      service("Cabnow", "Rides in town", {{"Ride", "Book a taxi ride"}}),
  });
  EXPECT_EQ(reach(index, "video games", "games", "synonym table", "video"), 0);
  EXPECT_GT(reach(index, "video games", "video", "word", "video"), 0);
  EXPECT_EQ(first(index, "new video games for switch"), "Questdex");
  // A misspelt word's correction in full is that word as much ("vidoe": video).
  EXPECT_GT(reach(index, "vidoe games", "vidoe", "spelling", "video"), 0);
  EXPECT_EQ(reach(index, "vidoe games", "games", "synonym table", "video"), 0);
  EXPECT_EQ(first(index, "new vidoe games for switch"), "Questdex");
}

// Nor does a second step through another word of the request: "isbn" (no word of this registry)
// reaches "book" through the curated vocabulary, and "book" reaches "reserve" (a booking); that
// would count the request's "book" again, for a bank's "Federal Reserve".
TEST(Search, ASecondStepThroughAnotherWordDoesNotCountItAgain) {
  SearchIndex index({
      service("Fedstat", "Economic data from the Federal Reserve Bank",
              {{"Series", "Economic data from the Federal Reserve Bank"}}),
      service("Shelfbase", "Books", {{"Books", "Books"}}),
      service("Skyview", "Forecasts", {{"Forecast", "Weather forecasts"}}),
      service("Cabnow", "Rides in town", {{"Ride", "Book a taxi ride"}}),
  });
  EXPECT_EQ(reach(index, "find a book by isbn", "isbn", "synonym table", "reserv"), 0);
  EXPECT_GT(reach(index, "an isbn", "isbn", "synonym table", "reserv"), 0);
}

// A request names a service without the words many names share: "the bible" names "Bible
// API" (four of the names say "API"), whose name then counts in full.
TEST(Search, ARequestNamesAServiceWithoutTheWordsNamesShare) {
  SearchIndex index({
      service("Bible API", "Scripture in many languages", {{"Passage", "A passage by reference"}}),
      service("Poetry API", "Poems and epics by author", {{"Poem", "A poem and its verses"}}),
      service("Quote API", "Famous quotes", {{"Quote", "A random quote"}}),
      service("Cat API", "Pictures of cats", {{"Cat", "A random cat picture"}}),
      service("Lyrics Finder", "Song lyrics", {{"Lyrics", "The verses and chorus of a song"}}),
  });
  EXPECT_EQ(first(index, "a verse from the Bible"), "Bible API");
  EXPECT_EQ(first(index, "verses of the bible"), "Bible API");
  // The shared word alone names nothing, and a name of nothing but shared words needs them.
  EXPECT_EQ(first(index, "quote"), "Quote API");
  // Nor does a place alone name a service: "weather in Berlin" does not name "City, Berlin".
  SearchIndex cities({
      service("City, Berlin", "Berlin city open data", {{"Datasets", "Open data of the city"}}),
      service("City, Prague", "Prague city open data", {{"Datasets", "Open data of the city"}}),
      service("City, Helsinki", "Helsinki city open data", {{"Datasets", "Open data of the city"}}),
      service("Skycast", "Weather", {{"Weather", "Weather"}}),
      service("Rainline", "Weather and forecasts", {{"Weather", "Weather and forecasts"}}),
      service("Meteobox", "Weather data", {{"Weather", "Weather data"}}),
  });
  EXPECT_EQ(first(cities, "weather in Berlin"), "Skycast");
  // A place of two words neither.
  SearchIndex two({
      service("City, New York Open Data", "New York (US) City Open Data",
              {{"Datasets", "Open data of the city"}}),
      service("City, Berlin Open Data", "Berlin city open data",
              {{"Datasets", "Open data of the city"}}),
      service("City, Helsinki Open Data", "Helsinki city open data",
              {{"Datasets", "Open data of the city"}}),
      service("Skycast", "Weather", {{"Weather", "Weather"}}),
      service("Rainline", "Weather and forecasts", {{"Weather", "Weather and forecasts"}}),
      service("Meteobox", "Weather data", {{"Weather", "Weather data"}}),
      service("Stormly", "Weather alerts", {{"Weather", "Severe weather alerts"}}),
      service("Cloudcast", "Weather maps", {{"Weather", "Weather radar maps"}}),
      service("Dewpoint", "Weather history", {{"Weather", "Past weather"}}),
      service("Breezy", "Wind and weather", {{"Weather", "Wind and weather"}}),
  });
  EXPECT_NE(first(two, "weather in new york"), "City, New York Open Data");
  EXPECT_EQ(first(cities, "open data of Berlin"), "City, Berlin");
}

// A number says how many, which year or what size: it counts as a name does, so that "50
// quid" does not make a service "up to 50 GB" the one asked for.
// A service's whole name written as neighbouring capitalised words that the registry has as
// one ("Hacker News": HackerNews) names that service, and those words are its name: not the
// name of a service called by one of them ("News"), and no name at all in a request whose every
// word is capitalised.
TEST(Search, AServicesNameWrittenInSeparateCapitalisedWordsNamesIt) {
  SearchIndex index({
      service("HackerNews", "Social news for computer science", {{"Social", "Social news"}}),
      service("TheNews", "Aggregated headlines, top story and live news",
              {{"News", "Top stories and live news"}}),
      service("Dropbox", "Cloud storage", {{"Files", "Store and share files"}}),
      service("Filestack", "File uploads", {{"Upload", "Upload a file from an app"}}),
      service("ExchangeRates", "Rates", {{"Rates", "Daily rates"}}),
      service("Currencylayer", "Currency exchange rates",
              {{"Live", "Live currency exchange rates"}}),
  });
  EXPECT_EQ(first(index, "Hacker News top stories"), "HackerNews");
  EXPECT_EQ(first(index, "Drop Box upload a file"), "Dropbox");
  const auto name_of = [&](std::string_view request, std::string_view w) {
    for (auto& q : index.interpret(request)) {
      if (q.word == w) return q.name;
    }
    return false;
  };
  EXPECT_TRUE(name_of("Hacker News top stories", "news"));
  EXPECT_FALSE(name_of("hacker news top stories", "news"));
  // Every word capitalised: the capitals say nothing.
  EXPECT_FALSE(name_of("Currency Exchange Rates Today", "exchange"));
  EXPECT_EQ(first(index, "Currency Exchange Rates Today"), "Currencylayer");
  EXPECT_TRUE(name_of("live Exchange Rates", "exchange"));
  // A service whose name holds the words and more is named by them too, as before.
  SearchIndex shows({
      service("Breaking Bad", "Characters and episodes", {{"Characters", "Cast of the series"}}),
      service("Breaking Bad Quotes", "Quotes", {{"Random", "A random quote from the series"}}),
      service("Quotable", "Famous quotes", {{"Random", "A random famous quote"}}),
  });
  EXPECT_EQ(first(shows, "Breaking Bad quotes"), "Breaking Bad Quotes");
  EXPECT_EQ(first(shows, "Breaking Bad cast"), "Breaking Bad");
}

// One capitalised word inside the request names a service whose whole name it is, stop words
// aside; not a service whose name only begins with it, nor one called by a word of time.
TEST(Search, ACapitalisedWordThatIsAServicesWholeNameNamesIt) {
  SearchIndex index({
      service("The Guardian", "Access all the content the Guardian creates",
              {{"Content", "Articles by tags and section"}}),
      service("TheNews", "Aggregated headlines, top story and live news",
              {{"News", "Top stories and live news"}}),
      service("Word Cloud", "Easily create word clouds", {{"Cloud", "A word cloud of a text"}}),
      service("Convertly", "Convert documents", {{"Convert", "Convert a document to PDF"}}),
  });
  const auto named = [&](std::string_view request, std::string_view w) {
    for (auto& q : index.interpret(request)) {
      if (q.word == w) return q.name;
    }
    return false;
  };
  EXPECT_EQ(first(index, "today's top stories from The Guardian"), "The Guardian");
  EXPECT_TRUE(named("today's top stories from The Guardian", "guardian"));
  EXPECT_FALSE(named("today's top stories from the guardian", "guardian"));
  EXPECT_FALSE(named("Guardian of top stories", "guardian"));  // the request's first word
  EXPECT_FALSE(named("convert my Word document to PDF", "word"));
  EXPECT_EQ(first(index, "convert my Word document to PDF"), "Convertly");
  EXPECT_FALSE(named("live News today", "news"));  // TheNews is not "News"
}

// "March" beside a day's number is a month: a word of time, neither related nor corrected
// ("march 3" is no "match"); alone it is a verb. A word WordNet knows only as an
// abbreviation written with two capitals ("MEd", a degree) is no name: "meds" are medicines.
TEST(Search, AMonthBesideADayIsAWordOfTimeAndAnAbbreviationIsNoName) {
  SearchIndex index({
      service("Bankdays", "Business day arithmetic", {{"Count", "Working days between two dates"}}),
      service("Scoreline", "Match results", {{"Results", "Results of every match"}}),
      service("Pillbox", "Drug information", {{"Drugs", "Medication and drug recalls"}}),
  });
  const auto word = [&](std::string_view request, std::string_view w) {
    for (auto& q : index.interpret(request)) {
      if (q.word == w) return q;
    }
    return QueryWord{};
  };
  const auto march = word("business days between march 3 and april 20", "march");
  EXPECT_TRUE(march.name);
  EXPECT_TRUE(march.terms.empty());
  EXPECT_TRUE(word("business days between 3 march and 20 june", "march").name);
  EXPECT_FALSE(word("march for the climate", "march").name);
  EXPECT_EQ(first(index, "business days between march 3 and april 20"), "Bankdays");
  EXPECT_FALSE(word("recalls of prescription meds", "meds").name);
  EXPECT_EQ(first(index, "recalls of prescription meds"), "Pillbox");
}

// A name given for comparison ("like", "similar to", "alternatives to", "than") is a name, of
// no service the request asks for; "I like X" still names X.
TEST(Search, ANameGivenForComparisonNamesNoService) {
  SearchIndex index({
      service("Breaking Bad", "Breaking Bad API", {{"Episodes", "Characters and episodes"}}),
      service("Tastematch", "Recommendations of similar shows, movies and music",
              {{"Similar", "Shows like the ones you name"}}),
  });
  EXPECT_EQ(first(index, "shows like Breaking Bad"), "Tastematch");
  EXPECT_EQ(first(index, "shows similar to Breaking Bad"), "Tastematch");
  EXPECT_EQ(first(index, "Breaking Bad episodes"), "Breaking Bad");
  EXPECT_EQ(first(index, "I like Breaking Bad, list its episodes"), "Breaking Bad");
  for (const auto& q : index.interpret("shows like Breaking Bad")) {
    if (q.word == "bad") EXPECT_TRUE(q.name);
  }
}

// A service whose outage is asked about is no service asked for: "is GitHub down?" asks for a
// status service.
TEST(Search, AServiceAskedAboutAsDownNamesNoService) {
  SearchIndex index({
      service("GitHub", "Make use of GitHub repositories, code and user data programmatically",
              {{"Development", "Make use of GitHub repositories, code and user data"}}),
      service("DownStatus", "Real-time status for GitHub, AWS, Discord and 90+ services",
              {{"Status", "Real-time status for GitHub, AWS, Discord and 90+ services"}}),
      service("Codeship", "Continuous integration in the cloud", {{"Builds", "Run builds"}}),
      service("Skycast", "Weather forecasts", {{"Main", "Hourly weather forecast"}}),
      service("Moneyline", "Money transfers", {{"Main", "Send money abroad"}}),
      service("Reelbase", "Movies", {{"Main", "Films and casts"}}),
      service("Pawprint", "Pets", {{"Main", "Random dog pictures"}}),
      service("Quotable", "Famous quotes", {{"Main", "A random famous quote"}}),
      service("Statusly", "Uptime checks for your own site",
              {{"Main", "Check whether a site is down"}}),
  });
  EXPECT_EQ(first(index, "Is GitHub down?"), "DownStatus");
  EXPECT_EQ(first(index, "GitHub repositories of a user"), "GitHub");
}

TEST(Search, ANumberCountsAsANameDoes) {
  SearchIndex index({
      service("Sendbig", "Large file transfer up to 50 GB with expiring download links",
              {{"Send Transfer", "Uploads big files and emails a download link to recipients"}}),
      service("Pennywise",
              "Reference data on world currencies with ISO codes, symbols and issuing countries",
              {{"Country Currency", "Which currency a country uses"}}),
      service("Forexa", "Currency exchange rates", {{"Rates", "Today's currency rates"}}),
      service("Coinbook", "Currency history", {{"History", "Past currency rates"}}),
      service("Skyview", "Forecasts", {{"Forecast", "Weather forecasts"}}),
      service("Cabnow", "Rides in town", {{"Ride", "Book a taxi ride"}}),
  });
  bool number = false;
  for (const auto& w : index.interpret("how many bucks is 50 quid")) {
    if (w.word == "50") number = w.name;
  }
  EXPECT_TRUE(number);
  EXPECT_NE(first(index, "how many bucks is 50 quid"), "Sendbig");
}

// A name of two words ("sao paulo") names one thing: each word counts half of what a one-word
// name counts. Counted twice, the city of two words made a service named for it outrank the
// one the task asks for ("fight a chargeback from a customer in sao paulo").
TEST(Search, ATwoWordNameCountsAsMuchAsAOneWordName) {
  SearchIndex index({
      service("Refundly", "Refunds", {{"Refund", "Refund a card payment"}}),
      service("Sao Paulo Pay", "Payments in Sao Paulo", {{"Pay", "Take a payment in Sao Paulo"}}),
      service("Lima Pay", "Payments in Lima", {{"Pay", "Take a payment in Lima"}}),
      service("Skyview", "Forecasts", {{"Forecast", "Weather forecasts"}}),
      service("Cabnow", "Rides in town", {{"Ride", "Book a taxi ride"}}),
      service("Clinicly", "Doctors near you", {{"Doctors", "Find a doctor by specialty"}}),
  });
  const auto score = [&](std::string_view query, std::string_view name) {
    for (const auto& h : index.search(query)) {
      if (h.definition->service_name == name) return h.score;
    }
    return 0.0;
  };
  const double sao_paulo = score("refund a payment in sao paulo", "Sao Paulo Pay");
  const double lima = score("refund a payment in lima", "Lima Pay");
  ASSERT_GT(lima, 0);
  // (The longer name makes the texts a little longer: a little less, not twice as much.)
  EXPECT_LE(sao_paulo, lima);
  EXPECT_GT(sao_paulo, 0.8 * lima);
  EXPECT_EQ(first(index, "refund a payment in sao paulo"), "Refundly");
}

// A phrase of the curated vocabulary ("read later": bookmark) says what the request means in
// the groups of each of its words: a service matching one of them alone ("read") does not
// outweigh the one that says what the phrase means.
TEST(Search, APhrasesMeaningCountsForEachOfItsWords) {
  SearchIndex index({
      service("Stashly", "Bookmarking service", {{"Bookmarks", "Bookmarking service"}}),
      service("Pagecount", "Read books online", {{"Read", "Read a book online"}}),
      service("Skyview", "Forecasts", {{"Forecast", "Weather forecasts"}}),
      service("Cabnow", "Rides in town", {{"Ride", "Book a taxi ride"}}),
  });
  EXPECT_GT(reach(index, "read later", "read", "synonym table", "bookmark"), 0);
  EXPECT_GT(reach(index, "read later", "later", "synonym table", "bookmark"), 0);
  EXPECT_EQ(reach(index, "read books", "read", "synonym table", "bookmark"), 0);
  EXPECT_EQ(first(index, "read later"), "Stashly");
  EXPECT_EQ(first(index, "keep this to read later"), "Stashly");
  // Below the phrase's last word, though: a service holding a broad word of a meaning ("cheap
  // flights": fare) gets from the two groups about what one of the phrase's words gives, not
  // twice the phrase's weight.
  const double last = reach(index, "read later", "later", "synonym table", "bookmark");
  const double other = reach(index, "read later", "read", "synonym table", "bookmark");
  EXPECT_LT(other, last);
  EXPECT_LT(other + last, 1.1);
}

// A term of a phrase's meaning that one of the phrase's words reaches on its own ("big file":
// large, which "big" means) counts in that word's group only: counted in each word's group, a
// service saying "large" about anything (a large collection of jokes) outranked the file
// services. A word outside the phrase that means the same is evidence of its own: "ibuprofen"
// means a drug, and so does "side effects".
TEST(Search, APhrasesMeaningDoesNotRecountWhatOneOfItsWordsSays) {
  SearchIndex index({
      service("Jokebox", "Large collection of jokes", {{"Jokes", "A large collection of jokes"}}),
      service("Dropfile", "Upload and share files", {{"Upload", "Upload a file and share it"}}),
      service("Skyview", "Forecasts", {{"Forecast", "Weather forecasts"}}),
      service("Cabnow", "Rides in town", {{"Ride", "Book a taxi ride"}}),
      service("Medfacts", "Drug labels", {{"Drugs", "Adverse events of a drug"}}),
      service("Gigmap", "Concert listings", {{"Events", "Concerts and events near you"}}),
  });
  EXPECT_GT(reach(index, "send a big file", "big", "wordnet synonym", "larg"), 0);
  EXPECT_EQ(reach(index, "send a big file", "file", "synonym table", "larg"), 0);
  EXPECT_EQ(reach(index, "send a big file", "send", "synonym table", "larg"), 0);
  // What no word of the phrase says alone stays in each word's group.
  EXPECT_GT(reach(index, "send a big file", "file", "synonym table", "upload"), 0);
  EXPECT_GT(reach(index, "send a big file", "send", "synonym table", "upload"), 0);
  EXPECT_EQ(first(index, "send a big file"), "Dropfile");
  EXPECT_GT(reach(index, "side effects of ibuprofen", "effects", "synonym table", "drug"), 0);
  EXPECT_EQ(first(index, "side effects of ibuprofen"), "Medfacts");
}

TEST(Search, TermsTheRegistryUsesTogetherCarryAWordOneStepFurther) {
  // "bucks" is no word of the registry; WordNet makes it "dollar", and "dollar" goes with
  // "remittance" in two services, so the one that only says "remittance" is found too, below.
  SearchIndex index(
      {service("Sendmo", "Dollar remittance to family", {{"Send", "Dollar remittance abroad"}}),
       service("Paywise", "Dollar remittance tracking", {{"Track", "Dollar remittance status"}}),
       service("Kiosk", "Remittance desk", {{"Desk", "Remittance desk hours"}}),
       service("Skyview", "Forecasts", {{"Forecast", "Weather forecasts"}})});
  SearchOptions options;
  options.explain = true;
  const auto hits = index.search("bucks", options);
  ASSERT_EQ(hits.size(), 3U);
  EXPECT_EQ(hits[2].definition->service_name, "Kiosk");
  EXPECT_LT(hits[2].score, hits[0].score);
  ASSERT_EQ(hits[2].capabilities[0].matches.size(), 1U);
  EXPECT_EQ(hits[2].capabilities[0].matches[0].via, "registry co-occurrence");
  EXPECT_EQ(hits[0].capabilities[0].matches[0].via, "wordnet synonym");
}

TEST(Search, ACompoundServiceNameFindsItsWords) {
  auto defs = everyday();
  defs.push_back(service("Pollenbeacon", "Counts for allergy sufferers",
                         {{"Counts", "Daily counts by region"}}));
  SearchIndex index(defs);
  EXPECT_EQ(first(index, "pollen"), "Pollenbeacon");
  SearchOptions options;
  options.explain = true;
  const auto hits = index.search("pollen", options);
  ASSERT_FALSE(hits.empty());
  ASSERT_EQ(hits[0].capabilities[0].matches.size(), 1U);
  EXPECT_GT(hits[0].capabilities[0].matches[0].fields[2], 0);  // service.name
}

// A word of the request written in camelCase that the registry has whole ("YouTube", the name
// of a service) is that one word; one it does not have is read in parts ("sendMessage").
TEST(Search, ACamelCaseWordTheRegistryHasWholeIsOneWord) {
  SearchIndex index({
      service("YouTube", "Videos and channels", {{"Search", "Find videos"}}),
      service("Tube Map", "London Underground lines", {{"Lines", "The tube lines of London"}}),
      service("Mailer", "Send email", {{"Send Message", "Send a message to an address"}}),
  });
  const auto words = [&](std::string_view query) {
    std::vector<std::string> out;
    for (const auto& w : index.interpret(query)) out.push_back(w.word);
    return out;
  };
  EXPECT_EQ(words("watch videos on YouTube"),
            (std::vector<std::string>{"watch", "videos", "youtube"}));
  EXPECT_EQ(words("sendMessage"), (std::vector<std::string>{"send", "message"}));
  EXPECT_EQ(first(index, "cat videos on YouTube"), "YouTube");
  EXPECT_EQ(first(index, "sendMessage"), "Mailer");
  EXPECT_EQ(first(index, "tube lines"), "Tube Map");
}

// A definition that writes a camelCase name in its texts ("status for GitHub") has it as the one
// word the request makes of it, besides its parts.
TEST(Search, ACamelCaseWordInADefinitionsTextIsOneWordToo) {
  SearchIndex index({
      service("GitHub", "Repositories, issues and code", {{"Repos", "List repositories"}}),
      service("Downwatch", "Real-time status for GitHub, AWS and Discord",
              {{"Status", "Whether a service is down now"}}),
      service("Pingly", "Uptime of any website", {{"Status", "Whether a website is down now"}}),
  });
  SearchOptions options;
  options.explain = true;
  bool matched = false;
  for (const auto& h : index.search("is GitHub down", options)) {
    if (h.definition->service_name != "Downwatch") continue;
    for (const auto& c : h.capabilities) {
      for (const auto& m : c.matches) {
        matched = matched || (m.word == "github" && m.term == "github");
      }
    }
  }
  EXPECT_TRUE(matched);
  const auto hits = index.search("is GitHub down");
  ASSERT_GE(hits.size(), 3U);
  const auto rank = [&](std::string_view name) {
    return std::find_if(hits.begin(), hits.end(),
                        [&](const ServiceHit& h) { return h.definition->service_name == name; }) -
           hits.begin();
  };
  EXPECT_LT(rank("Downwatch"), rank("Pingly"));
}

// The parts of a name written in camelCase in a definition's text ("YouTube": tube) count half
// a word: a request for the London tube asks for no video service. An identifier's parts
// ("sendMessage") are words as any other.
TEST(Search, ANamesCamelCasePartsInADefinitionsTextCountHalf) {
  SearchIndex index({
      service("Clipper", "Clips from YouTube", {{"Clips", "Short clips from YouTube"}}),
      service("Railfan", "Clips from the tube", {{"Clips", "Short clips from the tube"}}),
      service("Relay", "Messaging", {{"Send", "Calls sendMessage"}}),
      service("Postbox", "Messaging", {{"Send", "Calls send message"}}),
  });
  const auto score = [&](std::string_view query, std::string_view name) {
    for (const auto& h : index.search(query)) {
      if (h.definition->service_name == name) return h.score;
    }
    return 0.0;
  };
  // (Half the term frequency, saturated: 0.72 of the word's score, 0.93 at full weight.)
  EXPECT_LT(score("tube", "Clipper"), 0.8 * score("tube", "Railfan"));
  EXPECT_GT(score("tube", "Clipper"), 0.0);
  EXPECT_GT(score("youtube clips", "Clipper"), score("youtube clips", "Railfan"));
  EXPECT_NEAR(score("message", "Relay"), score("message", "Postbox"), 0.05);
}

// A request's words are the client's: a word as long as a request body is no lemma and has no
// correction, and searching for it ends (its deletions alone would take the cube of its length).
TEST(Search, AVeryLongWordIsReadAsNothing) {
  SearchIndex index(everyday());
  const std::string huge(200000, 'w');
  EXPECT_TRUE(index.search(huge).empty());
  const auto hits = index.search(huge + " forecast " + std::string(5000, 'q') + "x");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].definition->service_name, "Skycast");
  for (const auto& w : index.interpret(huge + " weather")) {
    if (w.word.size() > 100) {
      EXPECT_TRUE(w.terms.empty());
    }
  }
}

// A definition's very long word (a key, an identifier) is kept as a term but neither split into
// two words nor indexed for spelling: both cost the square of its length.
TEST(Search, AVeryLongWordInADefinitionCostsItsLengthOnly) {
  std::string key;
  for (std::size_t i = 0; i < 1500; ++i) key += static_cast<char>('a' + (i * 7 + i / 26) % 26);
  SearchIndex index({service("Keyvault" + key, "Stores keys such as " + key,
                             {{"Store Key", "Keep a secret key " + key}}),
                     service("Skycast", "Weather forecasts", {{"Forecast", "Weather forecast"}})});
  // Indexed for spelling, its deletions alone would take over 30 MB (and seconds to make).
  EXPECT_LT(index.memory_bytes(), std::size_t{4} << 20);
  EXPECT_EQ(first(index, "weather forecast"), "Skycast");
  EXPECT_EQ(first(index, key), "Keyvault" + key);
  EXPECT_EQ(first(index, "store a secret key"), "Keyvault" + key);
}

TEST(Search, ExplainsWhichTermsMatchedWhichFields) {
  SearchIndex index(everyday());
  SearchOptions options;
  options.explain = true;
  const auto hits = index.search("wheather forecast", options);
  ASSERT_FALSE(hits.empty());
  ASSERT_FALSE(hits[0].capabilities.empty());
  const auto& matches = hits[0].capabilities[0].matches;
  ASSERT_EQ(matches.size(), 2U);
  double total = 0;
  for (const auto& m : matches) {
    double fields = 0;
    for (const double f : m.fields) fields += f;
    EXPECT_NEAR(fields, m.score, 1e-6) << m.term;
    total += m.score;
    if (m.word == "wheather") {
      EXPECT_EQ(m.via, "spelling");
      EXPECT_EQ(m.term, "weather");
      EXPECT_FLOAT_EQ(m.weight, 1.0F);  // one edit
    } else {
      EXPECT_EQ(m.via, "word");
      EXPECT_GT(m.fields[0], 0);  // capability.name "Forecast"
    }
  }
  EXPECT_GT(total, 0);
  // Without the option nothing is explained.
  EXPECT_TRUE(index.search("wheather forecast")[0].capabilities[0].matches.empty());
  const auto response = registry_response(hits);
  const auto& m = response.at("services").at(0).at("relevant_capabilities").at(0).at("matches");
  EXPECT_TRUE(m.is_array());
  const auto words = query_explanation(index.interpret("wheather forecast"));
  EXPECT_EQ(words.at("words").at(0).at("word"), json::value("wheather"));
}

}  // namespace
}  // namespace hearth::a2s
