#include "agentapp/store/services.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <variant>

#include "common/beneath.hpp"
#include "common/fd.hpp"

namespace hearth::agentapp {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::string word;
  for (char c : line) {
    if (c == ' ' || c == '\t') {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

/// A regular file `rel` inside `package`, opened below it with no link followed (the package is
/// the app's, whatever it holds): the descriptor, or an invalid one.
Fd open_package_file(const fs::path& package, std::string_view rel) {
  std::string clean(rel);
  while (clean.starts_with("./")) clean.erase(0, 2);
  if (!is_clean_relative(clean)) return Fd();
  BeneathFailure failure;
  Fd fd = open_beneath(package, clean, O_RDONLY, failure);
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Fd();
  return fd;
}

/// `rel` as a regular file inside `package` (no link followed); nullopt when it is not one.
std::optional<fs::path> package_file(const fs::path& package, std::string_view rel) {
  if (!open_package_file(package, rel)) return std::nullopt;
  return (package / fs::path(std::string(rel))).lexically_normal();
}

/// The interpreter of a script: its `#!` line, else the service's language.
std::optional<std::vector<std::string>> interpreter(const fs::path& package, std::string_view rel,
                                                    std::string_view language) {
  std::string first;
  if (Fd fd = open_package_file(package, rel)) {
    char buf[256];
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) first.assign(buf, static_cast<std::size_t>(n));
  }
  first = first.substr(0, first.find('\n'));
  if (!first.empty() && first.back() == '\r') first.pop_back();
  if (first.starts_with("#!")) {
    auto line = words(std::string_view(first).substr(2));
    if (line.empty()) return std::nullopt;
    // `#!/usr/bin/env python3 -u`: the program env would find, with its arguments.
    if (line.front() == "/usr/bin/env" || line.front() == "/bin/env") {
      line.erase(line.begin());
      if (!line.empty() && line.front() == "-S") line.erase(line.begin());
      if (line.empty()) return std::nullopt;
    }
    return line;
  }
  if (language == "python" || language == "python3") return std::vector<std::string>{"python3"};
  if (language == "javascript" || language == "js" || language == "node" || language == "nodejs") {
    return std::vector<std::string>{"node"};
  }
  if (language == "shell" || language == "sh" || language == "bash") {
    return std::vector<std::string>{language == "bash" ? "bash" : "sh"};
  }
  return std::nullopt;
}

std::vector<std::string> string_list(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_array()) return out;
  for (const auto& item : v->get_array()) {
    if (item.is_string()) out.emplace_back(item.get_string());
  }
  return out;
}

/// The domains of the app's network permissions (only those the service names, when it names
/// any).
std::vector<std::string> network_hosts(const json::object& fm, const json::object& service) {
  const auto named = string_list(service, "permissions");
  std::vector<std::string> hosts;
  const auto* list = fm.if_contains("permissions");
  if (list == nullptr || !list->is_array()) return hosts;
  for (const auto& p : list->get_array()) {
    if (!p.is_object() || json::string_member(p.get_object(), "scope") != "network") continue;
    const auto key = json::string_member(p.get_object(), "key");
    if (!named.empty() && std::find(named.begin(), named.end(), key) == named.end()) continue;
    for (auto& d : string_list(p.get_object(), "domains")) hosts.push_back(std::move(d));
  }
  return hosts;
}

/// The network and resource limits of a service, into `out`; the problem when they are invalid.
template <class Unit>
std::optional<std::string> limits_of(const json::object& fm, const json::object& service,
                                     Unit& out) {
  out.network = json::string_member(service, "network");
  if (out.network.empty()) out.network = "deny-by-default";
  if (out.network == "remote-allowed") {
    out.hosts = network_hosts(fm, service);
    if (out.hosts.empty()) {
      return "network remote-allowed, but no network permission of the app names its domains";
    }
  } else if (out.network != "deny-by-default" && out.network != "host-mediated" &&
             out.network != "loopback-only") {
    return "network '" + out.network + "' is not one the format defines";
  }
  const auto* limits = service.if_contains("resourceLimits");
  if (limits == nullptr || !limits->is_object()) return std::nullopt;
  const auto number = [&](std::string_view key) -> std::optional<double> {
    const auto* v = limits->get_object().if_contains(key);
    if (v == nullptr || !v->is_number()) return std::nullopt;
    return v->to_number<double>();
  };
  if (auto mb = number("memoryMb")) {
    if (*mb <= 0 || *mb > 1 << 20) return "resourceLimits.memoryMb is out of range";
    out.memory_bytes = static_cast<std::uint64_t>(*mb * 1024 * 1024);
  }
  if (auto ms = number("timeoutMs")) {
    if (*ms < 1 || *ms > 3'600'000) {
      return "resourceLimits.timeoutMs is out of range (1 to 3600000)";
    }
    out.call_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*ms));
  }
  return std::nullopt;
}

/// A program that, given no argument, reads the program it runs from stdin.
bool is_interpreter(std::string_view program) {
  for (std::string_view known : {"python", "python3", "node", "nodejs", "sh", "bash", "dash",
                                 "ruby", "perl", "php", "lua", "deno", "bun"}) {
    if (program == known) return true;
  }
  return false;
}

/// How to run the service, or why hearth does not.
std::variant<BackendService, std::string> plan_one(const json::object& fm,
                                                   const json::object& service,
                                                   const fs::path& package) {
  BackendService out;
  out.key = json::string_member(service, "key");
  const auto plane = json::string_member(service, "executionPlane");
  if (plane != "client-local") {
    return plane.empty() ? std::string(
                               "it declares no executionPlane (hearth runs client-local "
                               "backends)")
                         : "hearth runs client-local backends, not " + plane + " ones";
  }
  const auto protocol = json::string_member(service, "protocol");
  if (protocol != "stdio-jsonrpc") {
    return "hearth runs stdio-jsonrpc backends, not " +
           (protocol.empty() ? std::string("ones without a protocol") : protocol);
  }
  if (auto problem = limits_of(fm, service, out)) return *std::move(problem);
  out.capabilities = string_list(service, "requiredCapabilities");

  // The command line as MCP server configurations write it: `command` (words, or a list of
  // them) followed by `args`; without `command`, the file `binary`, `path` or `entry` names
  // (with `args` after it). A command that names no package file itself and has no `args` runs
  // the `entry` or `path` file: `command: python3` with `path: services/backend.py`.
  std::vector<std::string> line;
  bool from_command = false;
  if (const auto* c = service.if_contains("command"); c != nullptr && c->is_string()) {
    line = words(c->get_string());
    from_command = true;
  } else if (c != nullptr && c->is_array()) {
    for (const auto& word : c->get_array()) {
      if (!word.is_string()) return std::string("command must be a list of strings");
      line.emplace_back(word.get_string());
    }
    from_command = true;
  } else if (c != nullptr && !c->is_null()) {
    return std::string("command must be text or a list of strings");
  } else {
    for (const char* field : {"binary", "path", "entry"}) {
      auto file = json::string_member(service, field);
      if (!file.empty()) {
        line.push_back(std::move(file));
        break;
      }
    }
  }
  if (line.empty()) return std::string("it names no command, binary, path or entry");
  const auto* args = service.if_contains("args");
  if (args != nullptr && !args->is_null()) {
    if (!args->is_array()) return std::string("args must be a list of strings");
    for (const auto& arg : args->get_array()) {
      if (!arg.is_string()) return std::string("args must be a list of strings");
      line.emplace_back(arg.get_string());
    }
  } else if (from_command &&
             std::none_of(line.begin(), line.end(), [&package](const std::string& word) {
               return package_file(package, word).has_value();
             })) {
    for (const char* field : {"entry", "path"}) {
      auto file = json::string_member(service, field);
      if (!file.empty() && package_file(package, file)) {
        line.push_back(std::move(file));
        break;
      }
    }
  }
  const auto language = json::string_member(service, "language");
  if (auto script = package_file(package, line.front())) {
    auto run = interpreter(package, line.front(), language);
    if (!run) {
      return line.front() + " has no #! line and hearth knows no interpreter for language '" +
             language + "' (package files are not executable themselves)";
    }
    out.script = *script;
    out.argv = std::move(*run);
    out.argv.push_back(script->string());
    line.erase(line.begin());
  } else if (line.front().find('/') != std::string::npos) {
    return "its command " + line.front() + " is not a file inside the package";
  } else {
    out.argv.push_back(line.front());
    line.erase(line.begin());
  }
  // An interpreter alone would read its program from stdin, where hearth writes JSON-RPC: it
  // could never answer. Say so now rather than restart it forever.
  if (out.argv.size() == 1 && line.empty() && is_interpreter(out.argv.front())) {
    return "its command " + out.argv.front() +
           " names no script to run (give it in args, or in entry or path)";
  }
  // Arguments that name package files (relative to the package folder) are given as absolute
  // paths.
  for (auto& arg : line) {
    if (auto file = package_file(package, arg)) {
      if (out.script.empty()) out.script = *file;
      out.argv.push_back(file->string());
    } else {
      out.argv.push_back(std::move(arg));
    }
  }
  return out;
}

bool is_js_name(std::string_view s) {
  return s == "javascript" || s == "js" || s == "node" || s == "nodejs" || s == "ecmascript";
}

/// The JS module a worker or workflow runs, or why it is not one hearth can run.
std::variant<std::string, std::string> js_module(const fs::path& package, const std::string& rel) {
  const fs::path p = fs::path(rel).lexically_normal();
  const auto ext = p.extension().string();
  if (ext != ".js" && ext != ".mjs" && ext != ".cjs") {
    return std::variant<std::string, std::string>(std::in_place_index<1>,
                                                  rel + " is not a JavaScript module");
  }
  if (!package_file(package, rel)) {
    return std::variant<std::string, std::string>(std::in_place_index<1>,
                                                  rel + " is not a file inside the package");
  }
  return std::variant<std::string, std::string>(std::in_place_index<0>, p.generic_string());
}

}  // namespace

JsPlan plan_js_units(const json::object& front_matter, const fs::path& package) {
  JsPlan plan;
  const auto visit = [&](const json::object& item, std::string kind, const std::string& rel) {
    JsUnit unit;
    unit.key = json::string_member(item, "key");
    unit.kind = std::move(kind);
    const auto* req = item.if_contains("required");
    const bool required = req != nullptr && req->is_bool() && req->get_bool();
    if (rel.empty()) {
      plan.not_run.push_back({unit.key, required, "it names no entry or path"});
      return;
    }
    auto module = js_module(package, rel);
    if (module.index() == 1) {
      plan.not_run.push_back({unit.key, required, std::get<1>(std::move(module))});
      return;
    }
    unit.module = std::get<0>(std::move(module));
    if (auto problem = limits_of(front_matter, item, unit)) {
      plan.not_run.push_back({unit.key, required, *std::move(problem)});
      return;
    }
    plan.run.push_back(std::move(unit));
  };
  if (const auto* list = front_matter.if_contains("services");
      list != nullptr && list->is_array()) {
    for (const auto& item : list->get_array()) {
      if (!item.is_object()) continue;
      const auto& service = item.get_object();
      if (json::string_member(service, "kind") != "worker") continue;
      if (!is_js_name(json::string_member(service, "language")) &&
          !is_js_name(json::string_member(service, "runtime"))) {
        continue;  // a worker in another language: not hearth's to run in its JS workers
      }
      auto rel = json::string_member(service, "entry");
      if (rel.empty()) rel = json::string_member(service, "path");
      visit(service, "worker", rel);
    }
  }
  if (const auto* list = front_matter.if_contains("workflows");
      list != nullptr && list->is_array()) {
    for (const auto& item : list->get_array()) {
      if (!item.is_object()) continue;
      const auto entry = json::string_member(item.get_object(), "entry");
      const auto ext = fs::path(entry).extension().string();
      if (ext == ".js" || ext == ".mjs" || ext == ".cjs") {
        visit(item.get_object(), "workflow", entry);
      }
    }
  }
  return plan;
}

BackendPlan plan_backends(const json::object& front_matter, const fs::path& package) {
  BackendPlan plan;
  const auto* list = front_matter.if_contains("services");
  if (list == nullptr || !list->is_array()) return plan;
  for (const auto& item : list->get_array()) {
    if (!item.is_object()) continue;
    const auto& service = item.get_object();
    if (json::string_member(service, "kind") != "app-backend") continue;
    const auto* req = service.if_contains("required");
    const bool required = req != nullptr && req->is_bool() && req->get_bool();
    auto planned = plan_one(front_matter, service, package);
    if (auto* run = std::get_if<BackendService>(&planned)) {
      run->required = required;
      plan.run.push_back(std::move(*run));
    } else {
      plan.not_run.push_back({json::string_member(service, "key"), required,
                              std::move(std::get<std::string>(planned))});
    }
  }
  return plan;
}

}  // namespace hearth::agentapp
