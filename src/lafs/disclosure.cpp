#include "lafs/disclosure.hpp"

#include <algorithm>

#include "lafs/envelope.hpp"

namespace hearth::lafs {

namespace {

Error bad_param(std::string_view field, const std::string& why) {
  json::object details;
  details["field"] = field;
  return make_error(kValidationSchema, std::string(field) + ": " + why, std::move(details));
}

Result<std::vector<std::string>> string_list(const json::value& v, std::string_view field) {
  if (!v.is_array()) return bad_param(field, "must be an array of strings");
  if (v.get_array().size() > kMaxDisclosureEntries) {
    return bad_param(field,
                     "may hold at most " + std::to_string(kMaxDisclosureEntries) + " entries");
  }
  std::vector<std::string> out;
  for (const auto& item : v.get_array()) {
    if (!item.is_string() || item.get_string().empty()) {
      return bad_param(field, "must be an array of non-empty strings");
    }
    out.emplace_back(item.get_string());
  }
  return out;
}

std::size_t depth_of(std::string_view path) {
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '.')) + 1;
}

json::object pick(const json::object& o, const std::vector<std::string>& fields,
                  std::vector<bool>& seen) {
  json::object out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (const json::value* v = o.if_contains(fields[i])) {
      out[fields[i]] = *v;
      seen[i] = true;
    }
  }
  return out;
}

json::value pick_value(const json::value& v, const std::vector<std::string>& fields,
                       std::vector<bool>& seen) {
  if (v.is_object()) return pick(v.get_object(), fields, seen);
  if (v.is_array()) {
    json::array out;
    for (const auto& item : v.get_array()) {
      out.push_back(item.is_object() ? json::value(pick(item.get_object(), fields, seen)) : item);
    }
    return out;
  }
  return v;
}

// Expands one path: walks to the parent (through arrays), resolves, and stores the value.
Status expand_at(json::value& node, std::string_view rest, std::string_view full,
                 const ExpansionCatalog::Resolver& resolver) {
  if (node.is_array()) {
    for (auto& item : node.get_array()) {
      HEARTH_RETURN_IF_ERROR(expand_at(item, rest, full, resolver));
    }
    return {};
  }
  if (!node.is_object()) {
    return make_error(kDisclosureUnknownField,
                      "_expand: '" + std::string(full) + "' has no object to expand into",
                      json::object{{"field", full}});
  }
  auto& obj = node.get_object();
  const std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos) {
    auto value = resolver(node);
    if (!value.ok()) return std::move(value).error();
    obj[rest] = std::move(value).value();
    return {};
  }
  json::value* child = obj.if_contains(rest.substr(0, dot));
  if (child == nullptr) {
    return make_error(kDisclosureUnknownField,
                      "_expand: '" + std::string(full) + "' needs '" +
                          std::string(rest.substr(0, dot)) + "', which the result does not have",
                      json::object{{"field", full}});
  }
  return expand_at(*child, rest.substr(dot + 1), full, resolver);
}

}  // namespace

Result<Disclosure> parse_disclosure(const json::object& params) {
  Disclosure d;
  if (const json::value* f = params.if_contains("_fields")) {
    auto list = string_list(*f, "_fields");
    if (!list.ok()) return std::move(list).error();
    d.fields = std::move(list).value();
  }
  if (const json::value* e = params.if_contains("_expand")) {
    auto list = string_list(*e, "_expand");
    if (!list.ok()) return std::move(list).error();
    for (const auto& path : list.value()) {
      if (path.front() == '.' || path.back() == '.' || path.find("..") != std::string::npos) {
        return bad_param("_expand", "'" + path + "' is not a dotted path");
      }
      if (depth_of(path) > kMaxExpandDepth) {
        json::object details{{"field", path},
                             {"depth", depth_of(path)},
                             {"maxDepth", kMaxExpandDepth},
                             {"constraint", "expandDepth"}};
        return make_error(
            kMviBudgetExceeded,
            "_expand: '" + path + "' is deeper than " + std::to_string(kMaxExpandDepth) + " levels",
            std::move(details));
      }
    }
    d.expand = std::move(list).value();
  }
  if (const json::value* m = params.if_contains("_mvi")) {
    std::optional<Mvi> level = m->is_string() ? parse_mvi(m->get_string()) : std::nullopt;
    if (!level || *level == Mvi::kCustom) {
      return bad_param(
          "_mvi",
          "must be \"minimal\", \"standard\" or \"full\" (\"custom\" is set by the server)");
    }
    d.mvi = level;
  }
  if (const json::value* b = params.if_contains("_budget")) {
    auto budget = parse_budget(*b);
    if (!budget.ok()) return std::move(budget).error();
    d.budget = budget.value();
  }
  return d;
}

FieldsOutcome apply_fields(const json::value& result, const std::vector<std::string>& fields) {
  FieldsOutcome out;
  std::vector<bool> seen(fields.size(), false);
  if (fields.empty() || result.is_null()) {
    out.result = result;
    return out;
  }
  if (result.is_array()) {
    out.result = pick_value(result, fields, seen);
  } else if (result.is_object()) {
    const auto& obj = result.get_object();
    const bool top_level = std::any_of(fields.begin(), fields.end(),
                                       [&](const std::string& f) { return obj.contains(f); });
    if (top_level) {
      out.result = pick(obj, fields, seen);
    } else {
      json::object wrapper;
      for (const auto& kv : obj) wrapper[kv.key()] = pick_value(kv.value(), fields, seen);
      out.result = std::move(wrapper);
    }
  } else {
    out.result = result;
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (!seen[i]) out.unknown.push_back(fields[i]);
  }
  return out;
}

void ExpansionCatalog::add(std::string path, Resolver resolver) {
  resolvers_[std::move(path)] = std::move(resolver);
}

std::vector<std::string> ExpansionCatalog::paths() const {
  std::vector<std::string> out;
  for (const auto& kv : resolvers_) out.push_back(kv.first);
  return out;
}

const ExpansionCatalog::Resolver* ExpansionCatalog::find(std::string_view path) const {
  auto it = resolvers_.find(path);
  return it == resolvers_.end() ? nullptr : &it->second;
}

Result<json::value> apply_expand(json::value result, const std::vector<std::string>& expand,
                                 const ExpansionCatalog& catalog, std::size_t max_depth) {
  std::vector<std::string> order = expand;
  // Parents before children: "owner" must be inlined before "owner.team" can be.
  std::stable_sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
    return depth_of(a) < depth_of(b);
  });
  for (const auto& path : order) {
    if (depth_of(path) > max_depth) {
      json::object details{{"field", path},
                           {"depth", depth_of(path)},
                           {"maxDepth", max_depth},
                           {"constraint", "expandDepth"}};
      return make_error(
          kMviBudgetExceeded,
          "_expand: '" + path + "' is deeper than " + std::to_string(max_depth) + " levels",
          std::move(details));
    }
    const ExpansionCatalog::Resolver* resolver = catalog.find(path);
    if (resolver == nullptr) {
      json::array available;
      for (const auto& p : catalog.paths()) available.push_back(json::value(p));
      json::object details{{"field", path}, {"available", std::move(available)}};
      return make_error(kDisclosureUnknownField, "_expand: unknown expansion field '" + path + "'",
                        std::move(details));
    }
    HEARTH_RETURN_IF_ERROR(expand_at(result, path, path, *resolver));
  }
  return result;
}

Status apply_disclosure(json::object& envelope, const Disclosure& d,
                        const ExpansionCatalog& catalog) {
  const json::value* success = envelope.if_contains("success");
  const bool ok = success != nullptr && success->is_bool() && success->get_bool();
  json::object& meta = envelope["_meta"].as_object();
  if (d.mvi) meta["mvi"] = to_string(*d.mvi);
  if (!ok) return {};
  if (d.expand && !d.expand->empty()) {
    auto expanded = apply_expand(envelope["result"], *d.expand, catalog);
    if (!expanded.ok()) return std::move(expanded).error();
    envelope["result"] = std::move(expanded).value();
  }
  if (d.fields) {
    FieldsOutcome out = apply_fields(envelope["result"], *d.fields);
    envelope["result"] = std::move(out.result);
    meta["mvi"] = to_string(Mvi::kCustom);
    if (!out.unknown.empty()) {
      json::array names;
      for (auto& n : out.unknown) names.push_back(json::value(n));
      json::array warnings = meta.contains("warnings") && meta["warnings"].is_array()
                                 ? meta["warnings"].as_array()
                                 : json::array();
      warnings.push_back(json::object{
          {"code", kDisclosureUnknownField},
          {"message", "_fields named fields the result does not have: " + json::dump(names)},
          {"fields", std::move(names)}});
      meta["warnings"] = std::move(warnings);
    }
  }
  if (d.budget) {
    auto enforced = enforce_budget(envelope, *d.budget);
    if (!enforced.ok()) return std::move(enforced).error();
  }
  return {};
}

json::object project_mvi(const json::object& env, Mvi level) {
  if (level == Mvi::kFull || level == Mvi::kCustom) return env;
  const json::value* meta_v = env.if_contains("_meta");
  const json::object empty;
  const json::object& meta =
      meta_v != nullptr && meta_v->is_object() ? meta_v->get_object() : empty;
  const json::value* success_v = env.if_contains("success");
  const bool success = success_v != nullptr && success_v->is_bool() && success_v->get_bool();
  auto copy = [](json::object& to, const json::object& from, std::string_view key) {
    if (const json::value* v = from.if_contains(key)) to[key] = *v;
  };
  json::object out;
  json::object m;
  if (level == Mvi::kStandard) {
    copy(out, env, "$schema");
    copy(m, meta, "timestamp");
    copy(m, meta, "operation");
  }
  out["success"] = success;
  copy(m, meta, "requestId");
  if (level == Mvi::kStandard) copy(m, meta, "mvi");
  copy(m, meta, "contextVersion");
  copy(m, meta, "sessionId");
  if (const json::value* w = meta.if_contains("warnings");
      w != nullptr && w->is_array() && !w->get_array().empty()) {
    m["warnings"] = *w;
  }
  out["_meta"] = std::move(m);
  const json::value* error = env.if_contains("error");
  if (level == Mvi::kStandard) {
    out["result"] = env.contains("result") ? env.at("result") : json::value(nullptr);
    if (error != nullptr && error->is_object()) out["error"] = *error;
    if (const json::value* p = env.if_contains("page"); p != nullptr && p->is_object()) {
      out["page"] = *p;
    }
  } else if (success) {
    copy(out, env, "result");
  } else if (error != nullptr && error->is_object()) {
    const auto& e = error->get_object();
    json::object pe;
    copy(pe, e, "code");
    copy(pe, e, "agentAction");
    if (const json::value* r = e.if_contains("retryAfterMs"); r != nullptr && !r->is_null()) {
      pe["retryAfterMs"] = *r;
    }
    if (const json::value* d = e.if_contains("details");
        d != nullptr && d->is_object() && !d->get_object().empty()) {
      pe["details"] = *d;
    }
    copy(pe, e, "escalationRequired");
    out["error"] = std::move(pe);
  }
  if (const json::value* x = env.if_contains("_extensions");
      x != nullptr && x->is_object() && !x->get_object().empty()) {
    out["_extensions"] = *x;
  }
  return out;
}

}  // namespace hearth::lafs
