#include "cli/summary.hpp"

#include <sstream>

namespace hearth::cli {
namespace {

std::string bytes_text(std::uint64_t n) {
  if (n >= (1ull << 20) && n % (1ull << 20) == 0) return std::to_string(n >> 20) + " MiB";
  if (n >= (1ull << 10) && n % (1ull << 10) == 0) return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + " bytes";
}

std::string permissions_text(const manifest::Permissions& p) {
  std::vector<std::string> parts;
  if (p.file_access) {
    std::string files;
    for (const auto& f : *p.file_access) files += (files.empty() ? "" : " ") + f;
    parts.push_back("files " + (files.empty() ? std::string("(none)") : files));
  }
  if (p.network_access) {
    const auto& na = *p.network_access;
    if (na.mode() != egress::NetworkPolicy::Mode::kList) {
      parts.push_back(na.mode() == egress::NetworkPolicy::Mode::kAny ? "network any"
                                                                     : "network none");
    } else {
      std::string hosts;
      for (const auto& h : na.list().entries()) hosts += (hosts.empty() ? "" : " ") + h;
      parts.push_back("network " + (hosts.empty() ? std::string("(none)") : hosts));
    }
  }
  if (p.max_execution_time) {
    parts.push_back("time " + std::to_string(p.max_execution_time->count()) + " ms");
  }
  if (p.max_memory) parts.push_back("memory " + bytes_text(*p.max_memory));
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : "; ") + part;
  return out.empty() ? "(none declared)" : out;
}

std::string handler_text(const manifest::Endpoint& ep) {
  const auto& h = ep.handler;
  std::string out = ep.handler_type;
  if (ep.handler_type == "script") {
    if (auto* c = h.if_contains("command"); c && c->is_string()) {
      out += ": " + std::string(c->get_string());
    }
    if (auto* a = h.if_contains("args"); a && a->is_array()) {
      for (const auto& arg : a->get_array()) {
        if (arg.is_string()) out += " " + std::string(arg.get_string());
      }
    }
    if (auto* in = h.if_contains("input"); in && in->is_string()) {
      out += "  [input " + std::string(in->get_string()) + "]";
    } else {
      out += "  [input stdin]";
    }
  }
  return out;
}

}  // namespace

std::string summary_text(const manifest::Manifest& m) {
  std::ostringstream out;
  out << m.name << " " << m.version << " (LAVS " << m.lavs << ")";
  if (!m.description.empty()) out << " - " << m.description;
  out << "\n  folder:      " << m.dir.string() << "\n";
  std::size_t width = 0;
  for (const auto& ep : m.endpoints) width = std::max(width, ep.id.size());
  out << "  endpoints:   " << m.endpoints.size() << "\n";
  for (const auto& ep : m.endpoints) {
    std::string method(manifest::to_string(ep.method));
    out << "    " << ep.id << std::string(width - ep.id.size() + 2, ' ') << method
        << std::string(14 - std::min<std::size_t>(method.size(), 13), ' ') << handler_text(ep);
    if (ep.input_schema) out << "  [input schema]";
    if (ep.output_schema) out << "  [output schema]";
    out << "\n";
  }
  if (!m.types.empty()) {
    out << "  types:      ";
    for (const auto& kv : m.types) out << " " << kv.key();
    out << "\n";
  }
  if (!m.view.is_null()) {
    out << "  view:        ";
    if (auto* comp = json::member(m.view, "component")) {
      auto* type = json::member(*comp, "type");
      std::string t = type && type->is_string() ? std::string(type->get_string()) : "?";
      out << t;
      for (const char* key : {"url", "package", "path"}) {
        if (auto* v = json::member(*comp, key); v && v->is_string()) {
          out << " " << v->get_string().c_str();
        }
      }
    }
    if (auto* fb = json::member(m.view, "fallback"); fb && fb->is_string()) {
      out << " (fallback " << fb->get_string().c_str() << ")";
    }
    out << "\n";
  }
  out << "  permissions: " << permissions_text(m.permissions) << "\n";
  for (const auto& ep : m.endpoints) {
    bool declared = ep.permissions.file_access || ep.permissions.network_access ||
                    ep.permissions.max_execution_time || ep.permissions.max_memory;
    if (declared) out << "    " << ep.id << ": " << permissions_text(ep.effective) << "\n";
  }
  return out.str();
}

json::value report_json(const host::Host* host, const host::LoadReport& report) {
  json::object out;
  out["ok"] = host != nullptr;
  json::array services;
  if (host) {
    for (const auto& s : *host->services()) {
      const auto& m = s->manifest;
      json::array endpoints;
      for (const auto& ep : m.endpoints) {
        endpoints.push_back(json::object{{"id", ep.id},
                                         {"method", manifest::to_string(ep.method)},
                                         {"handler", ep.handler_type},
                                         {"permissions", ep.effective.to_json()}});
      }
      services.push_back(json::object{{"name", m.name},
                                      {"version", m.version},
                                      {"description", m.description},
                                      {"folder", m.dir.string()},
                                      {"endpoints", std::move(endpoints)},
                                      {"permissions", m.permissions.to_json()}});
    }
  }
  out["services"] = std::move(services);
  json::array problems;
  for (const auto& f : report.failures) {
    for (const auto& p : f.problems) {
      problems.push_back(
          json::object{{"file", f.file.string()}, {"path", p.path}, {"message", p.message}});
    }
  }
  out["problems"] = std::move(problems);
  json::array warnings;
  for (const auto& w : report.warnings) warnings.push_back(json::value(w));
  out["warnings"] = std::move(warnings);
  return out;
}

namespace {
void pretty_into(const json::value& v, std::string& out, int indent) {
  auto pad = [&](int n) { out.append(static_cast<std::size_t>(n) * 2, ' '); };
  if (v.is_object() && !v.get_object().empty()) {
    out += "{\n";
    bool first = true;
    for (const auto& kv : v.get_object()) {
      if (!first) out += ",\n";
      first = false;
      pad(indent + 1);
      out += json::serialize(json::value(kv.key()));
      out += ": ";
      pretty_into(kv.value(), out, indent + 1);
    }
    out += "\n";
    pad(indent);
    out += "}";
  } else if (v.is_array() && !v.get_array().empty()) {
    out += "[\n";
    bool first = true;
    for (const auto& item : v.get_array()) {
      if (!first) out += ",\n";
      first = false;
      pad(indent + 1);
      pretty_into(item, out, indent + 1);
    }
    out += "\n";
    pad(indent);
    out += "]";
  } else {
    out += json::serialize(v);
  }
}
}  // namespace

std::string pretty_json(const json::value& value) {
  std::string out;
  pretty_into(value, out, 0);
  return out;
}

}  // namespace hearth::cli
