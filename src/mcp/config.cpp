#include "mcp/config.hpp"

#include <fstream>
#include <sstream>

#include "common/ascii.hpp"
#include "httpclient/client.hpp"

namespace hearth::mcp {

namespace fs = std::filesystem;

namespace {

bool env_name_ok(std::string_view name) {
  if (name.empty() || ascii::is_digit(name.front())) return false;
  for (const char c : name) {
    if (!(ascii::is_alnum(c) || c == '_')) return false;
  }
  return true;
}

/// {string: string} members, in document order.
std::vector<std::pair<std::string, std::string>> string_map(const json::value& v,
                                                            const std::string& path,
                                                            Problems& problems) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!v.is_object()) {
    problems.push_back({path, "must be an object of strings"});
    return out;
  }
  for (const auto& [key, value] : v.get_object()) {
    if (!value.is_string()) {
      problems.push_back({join_path(path, key), "must be a string"});
      continue;
    }
    out.emplace_back(std::string(key), std::string(value.get_string()));
  }
  return out;
}

bool has_control(std::string_view text) {
  for (const char c : text) {
    if (c == '\r' || c == '\n' || c == '\0') return true;
  }
  return false;
}

std::optional<ServerConfig> parse_server(std::string_view name, const json::value& v,
                                         const std::string& path, Problems& problems) {
  if (!v.is_object()) {
    problems.push_back(
        {path, "must be an object with `command` (stdio) or `url` (Streamable HTTP)"});
    return std::nullopt;
  }
  const auto& o = v.get_object();
  const std::size_t before = problems.size();
  std::string type;
  if (const auto* t = o.if_contains("type")) {
    if (!t->is_string()) {
      problems.push_back({join_path(path, "type"), "must be a string"});
    } else {
      type = std::string(t->get_string());
      if (type == "sse") {
        problems.push_back({join_path(path, "type"),
                            "the HTTP+SSE transport (MCP 2024-11-05) is not supported; hearth "
                            "speaks stdio and Streamable HTTP"});
      } else if (type != "stdio" && type != "http" && type != "streamable-http" &&
                 type != "streamableHttp") {
        problems.push_back(
            {join_path(path, "type"), "must be \"stdio\", \"http\" or \"streamable-http\""});
      }
    }
  }
  const auto* command = o.if_contains("command");
  const auto* url = o.if_contains("url");
  if ((command != nullptr) == (url != nullptr)) {
    problems.push_back({path, command != nullptr
                                  ? "has both `command` and `url`; a server is one or the other"
                                  : "needs `command` (stdio) or `url` (Streamable HTTP)"});
    return std::nullopt;
  }
  ServerConfig server;
  server.name = std::string(name);
  if (command != nullptr) {
    if (!type.empty() && type != "stdio") {
      problems.push_back({join_path(path, "type"), "a server with `command` is a stdio server"});
    }
    StdioServer s;
    if (!command->is_string() || command->get_string().empty() ||
        has_control(command->get_string())) {
      problems.push_back({join_path(path, "command"), "must be a non-empty string"});
    } else {
      s.command = std::string(command->get_string());
    }
    if (const auto* args = o.if_contains("args")) {
      if (!args->is_array()) {
        problems.push_back({join_path(path, "args"), "must be an array of strings"});
      } else {
        for (std::size_t i = 0; i < args->get_array().size(); ++i) {
          const auto& a = args->get_array()[i];
          if (!a.is_string() || a.get_string().find('\0') != json::string::npos) {
            problems.push_back({index_path(join_path(path, "args"), i), "must be a string"});
          } else {
            s.args.emplace_back(a.get_string());
          }
        }
      }
    }
    if (const auto* env = o.if_contains("env")) {
      s.env = string_map(*env, join_path(path, "env"), problems);
      for (const auto& [k, value] : s.env) {
        if (!env_name_ok(k)) {
          problems.push_back(
              {join_path(join_path(path, "env"), k), "is not a valid environment variable name"});
        } else if (value.find('\0') != std::string::npos) {
          problems.push_back({join_path(join_path(path, "env"), k), "must not contain NUL"});
        }
      }
    }
    if (const auto* cwd = o.if_contains("cwd")) {
      const fs::path p = cwd->is_string() ? fs::path(std::string(cwd->get_string())) : fs::path();
      bool inside = cwd->is_string() && !p.is_absolute();
      for (const auto& part : p) inside = inside && part != "..";
      if (!inside) {
        problems.push_back(
            {join_path(path, "cwd"), "must be a folder relative to the service folder, inside it"});
      } else {
        s.cwd = std::string(cwd->get_string());
        if (s.cwd.empty()) s.cwd = ".";
      }
    }
    server.transport = std::move(s);
  } else {
    if (!type.empty() && type == "stdio") {
      problems.push_back({join_path(path, "type"), "a server with `url` is not a stdio server"});
    }
    HttpServer h;
    const std::string_view text = url->is_string() ? std::string_view(url->get_string()) : "";
    if (!(text.starts_with("http://") || text.starts_with("https://")) || has_control(text) ||
        text.find(' ') != std::string_view::npos) {
      problems.push_back({join_path(path, "url"), "must be an http:// or https:// URL"});
    } else {
      h.url = std::string(text);
    }
    if (const auto* headers = o.if_contains("headers")) {
      h.headers = string_map(*headers, join_path(path, "headers"), problems);
      for (const auto& [k, value] : h.headers) {
        if (!httpclient::is_token(k)) {
          problems.push_back(
              {join_path(join_path(path, "headers"), k), "is not a valid header name"});
        } else if (has_control(value)) {
          problems.push_back(
              {join_path(join_path(path, "headers"), k), "must not contain CR, LF or NUL"});
        }
      }
    }
    server.transport = std::move(h);
  }
  if (problems.size() != before) return std::nullopt;
  return server;
}

}  // namespace

const ServerConfig* Config::find(std::string_view name) const {
  for (const auto& s : servers) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string Config::names() const {
  if (servers.empty()) return "none";
  std::string out;
  for (const auto& s : servers) {
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

Config parse_config(const json::value& document, Problems& problems) {
  Config config;
  if (!document.is_object()) {
    problems.push_back({"", "must be a JSON object with `mcpServers`"});
    return config;
  }
  const auto* servers = document.get_object().if_contains("mcpServers");
  if (servers == nullptr) {
    problems.push_back({"mcpServers", "is required"});
    return config;
  }
  if (!servers->is_object()) {
    problems.push_back({"mcpServers", "must be an object of servers by name"});
    return config;
  }
  for (const auto& [name, value] : servers->get_object()) {
    const std::string path = join_path("mcpServers", name);
    if (name.empty()) {
      problems.push_back({path, "a server name must not be empty"});
      continue;
    }
    if (auto server = parse_server(name, value, path, problems)) {
      config.servers.push_back(std::move(*server));
    }
  }
  return config;
}

Result<Config> load_config(const fs::path& service_dir) {
  const fs::path file = service_dir / kConfigFile;
  std::error_code ec;
  if (!fs::exists(file, ec)) return Config{};
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return Error::make(ErrorCode::kInvalidParams, std::string(kConfigFile) + ": cannot be read");
  }
  auto document = json::parse_text(text.str());
  if (!document.ok()) {
    return Error::make(ErrorCode::kInvalidParams,
                       std::string(kConfigFile) + ": " + document.error().message);
  }
  Problems problems;
  Config config = parse_config(document.value(), problems);
  if (!problems.empty()) {
    std::string message = std::string(kConfigFile) + ": ";
    for (std::size_t i = 0; i < problems.size(); ++i) {
      if (i > 0) message += "; ";
      message += problems[i].to_string();
    }
    json::array list;
    for (const auto& p : problems) {
      json::object o;
      o["path"] = p.path;
      o["message"] = p.message;
      list.push_back(std::move(o));
    }
    json::object data;
    data["problems"] = std::move(list);
    return Error::make(ErrorCode::kInvalidParams, std::move(message), std::move(data));
  }
  return config;
}

}  // namespace hearth::mcp
