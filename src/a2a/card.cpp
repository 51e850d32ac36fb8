#include "a2a/a2a.hpp"
#include "mcpserver/catalog.hpp"

namespace hearth::a2a {

namespace {

constexpr std::string_view kTokenDescription = "the daemon's per-launch token (its token file)";

json::array card_skills(const host::Host::ServiceList& services) {
  json::array skills;
  for (const auto& skill : mcpserver::name_tools(services)) {
    const auto& m = skill.service->manifest;
    const auto& e = *skill.endpoint;
    json::value input = mcpserver::endpoint_schema(m, e.id, "input");
    std::string description =
        (e.description.empty() ? e.id + " of " + m.name : e.description) +
        (e.method == manifest::Method::kQuery ? " (query: reads only)" : " (mutation)") +
        ". Send a message with metadata.skillId \"" + skill.name +
        "\" and the input as a data part.";
    if (input.is_object()) {
      description += " Input schema: " + json::dump(mcpserver::resolve_types(input, m.types));
    }
    skills.push_back(json::object{
        {"id", skill.name},
        {"name", m.name + ": " + e.id},
        {"description", std::move(description)},
        {"tags", json::array{json::string(m.name),
                             e.method == manifest::Method::kQuery ? "query" : "mutation"}},
        {"inputModes", json::array{"application/json"}},
        {"outputModes", json::array{"application/json"}}});
  }
  return skills;
}

}  // namespace

json::array supported_interfaces(const std::string& base_url) {
  const std::string url = base_url + std::string(kBasePath);
  // The first entry is the one a client should prefer (spec 8.3.1).
  return json::array{
      json::object{{"url", url}, {"protocolBinding", "JSONRPC"}, {"protocolVersion", "1.0"}},
      json::object{{"url", url}, {"protocolBinding", "HTTP+JSON"}, {"protocolVersion", "1.0"}},
      json::object{{"url", url}, {"protocolBinding", "JSONRPC"}, {"protocolVersion", "0.3"}}};
}

json::object agent_card(const host::Host& host, const Options& options, Version version) {
  auto services = host.services();
  std::string summary;
  for (const auto& s : *services) summary += (summary.empty() ? "" : ", ") + s->manifest.name;
  const std::string base = options.base_url ? options.base_url() : std::string();
  json::object card{
      {"name", options.name},
      {"description", "hearth, a local agent host: its LAVS services as skills (" +
                          (summary.empty() ? std::string("none") : summary) +
                          "). Each message runs one endpoint under the service's permissions."},
      {"version", options.version}};
  if (version == Version::k10) {
    card["supportedInterfaces"] = supported_interfaces(base);
    card["capabilities"] = json::object{
        {"streaming", true}, {"pushNotifications", false}, {"extendedAgentCard", false}};
    card["securitySchemes"] = json::object{
        {"bearer",
         json::object{{"httpAuthSecurityScheme",
                       json::object{{"scheme", "Bearer"}, {"description", kTokenDescription}}}}}};
    card["securityRequirements"] = json::array{
        json::object{{"schemes", json::object{{"bearer", json::object{{"list", json::array{}}}}}}}};
  } else {
    const std::string url = base + std::string(kBasePath);
    card["protocolVersion"] = kProtocolVersion03;
    card["url"] = url;
    card["preferredTransport"] = "JSONRPC";
    card["additionalInterfaces"] =
        json::array{json::object{{"url", url}, {"transport", "JSONRPC"}}};
    card["capabilities"] = json::object{
        {"streaming", true}, {"pushNotifications", false}, {"stateTransitionHistory", false}};
    card["securitySchemes"] = json::object{
        {"bearer",
         json::object{{"type", "http"}, {"scheme", "bearer"}, {"description", kTokenDescription}}}};
    card["security"] = json::array{json::object{{"bearer", json::array{}}}};
    // A 1.0 client that sent no A2A-Version still finds its interfaces (as the JS SDK's server
    // does): 0.3 clients ignore the member.
    card["supportedInterfaces"] = supported_interfaces(base);
  }
  card["defaultInputModes"] = json::array{"application/json"};
  card["defaultOutputModes"] = json::array{"application/json"};
  card["skills"] = card_skills(*services);
  return card;
}

}  // namespace hearth::a2a
