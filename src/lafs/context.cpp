#include "lafs/context.hpp"

#include <algorithm>
#include <cstdio>

#include "lafs/envelope.hpp"

namespace hearth::lafs {

namespace {

bool contains_value(const json::array& list, const json::value& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

void append_all(json::array& to, const json::value* from) {
  if (from == nullptr) return;
  if (from->is_array()) {
    for (const auto& item : from->get_array()) to.push_back(item);
  } else {
    to.push_back(*from);
  }
}

}  // namespace

ContextLedger::ContextLedger(std::string ledger_id, std::size_t max_entries,
                             std::vector<std::string> required_fields)
    : ledger_id_(std::move(ledger_id)),
      max_entries_(std::max<std::size_t>(1, max_entries)),
      required_fields_(std::move(required_fields)),
      created_at_(now_rfc3339()),
      updated_at_(created_at_) {}

Status ContextLedger::check_current(std::optional<std::uint64_t> version) const {
  if (!version) {
    return make_error(
        kContextMissing, "the step needs the context version it was based on",
        json::object{{"ledgerId", ledger_id_}, {"missing", json::array{"contextVersion"}}});
  }
  if (*version != version_) {
    return make_error(
        kContextStale,
        "context version " + std::to_string(*version) + " is not the current " +
            std::to_string(version_),
        json::object{
            {"ledgerId", ledger_id_}, {"version", *version}, {"currentVersion", version_}});
  }
  return {};
}

Result<std::uint64_t> ContextLedger::apply(const Mutation& m) {
  json::array missing;
  if (m.operation.empty()) missing.push_back(json::value("operation"));
  if (!m.expected_version) missing.push_back(json::value("contextVersion"));
  for (const auto& field : required_fields_) {
    if (!m.delta.contains(field)) missing.push_back(json::value(field));
  }
  if (!missing.empty()) {
    // The message first: an argument list's order of evaluation is unspecified.
    std::string message = "required context is missing: " + json::dump(missing);
    return make_error(kContextMissing, std::move(message),
                      json::object{{"ledgerId", ledger_id_}, {"missing", std::move(missing)}});
  }
  HEARTH_RETURN_IF_ERROR(check_current(m.expected_version));

  // Constraints: `constraints` is the full list after the step; every active constraint must be
  // in it unless `removedConstraints` names it. Dropping one by leaving it out is refused.
  json::array removed;
  if (const json::value* r = m.delta.if_contains("removedConstraints")) {
    if (!r->is_array()) {
      return make_error(kContextMissing, "removedConstraints must be a list of constraints",
                        json::object{{"ledgerId", ledger_id_}, {"field", "removedConstraints"}});
    }
    removed = r->get_array();
  }
  json::array next = state_.constraints;
  if (const json::value* c = m.delta.if_contains("constraints")) {
    if (!c->is_array()) {
      return make_error(kContextMissing, "constraints must be the list of active constraints",
                        json::object{{"ledgerId", ledger_id_}, {"field", "constraints"}});
    }
    json::array dropped;
    for (const auto& active : state_.constraints) {
      if (!contains_value(c->get_array(), active) && !contains_value(removed, active)) {
        dropped.push_back(active);
      }
    }
    if (!dropped.empty()) {
      return make_error(
          kContextMissing,
          "the step leaves out active constraints without removing them in removedConstraints",
          json::object{{"ledgerId", ledger_id_}, {"missingConstraints", std::move(dropped)}});
    }
    next = c->get_array();
  }
  json::array actually_removed;
  for (const auto& r : removed) {
    auto it = std::find(next.begin(), next.end(), r);
    if (it != next.end()) next.erase(it);
    if (contains_value(state_.constraints, r)) actually_removed.push_back(r);
  }

  // Accepted: fold the delta into the state.
  state_.constraints = std::move(next);
  if (const json::value* o = m.delta.if_contains("objective")) state_.objective = *o;
  append_all(state_.references, m.delta.if_contains("references"));
  append_all(state_.decisions, m.delta.if_contains("decisions"));
  if (const json::value* oi = m.delta.if_contains("openIssues")) {
    // openIssues is the current list, not an addition: issues get resolved.
    state_.open_issues = oi->is_array() ? oi->get_array() : json::array{*oi};
  }
  if (const json::value* s = m.delta.if_contains("state"); s != nullptr && s->is_object()) {
    for (const auto& kv : s->get_object()) state_.state[kv.key()] = kv.value();
  }
  ++version_;
  for (const auto& r : actually_removed) removed_.emplace_back(version_, r);
  LedgerEntry entry;
  entry.entry_id = ledger_id_ + "-" + std::to_string(version_);
  entry.version = version_;
  entry.timestamp = m.timestamp.empty() ? now_rfc3339() : m.timestamp;
  entry.operation = m.operation;
  entry.request_id = m.request_id;
  entry.context_delta = m.delta;
  updated_at_ = entry.timestamp;
  entries_.push_back(std::move(entry));
  if (entries_.size() > max_entries_) {
    // Compaction: the oldest entry leaves the list; what it did is already in state_.
    entries_.erase(entries_.begin());
    ++compacted_;
  }
  return version_;
}

json::object ContextLedger::to_json() const {
  json::array entries;
  for (const auto& e : entries_) {
    json::object o;
    o["entryId"] = e.entry_id;
    o["timestamp"] = e.timestamp;
    o["operation"] = e.operation;
    if (!e.request_id.empty()) o["requestId"] = e.request_id;
    o["contextDelta"] = e.context_delta;
    entries.push_back(std::move(o));
  }
  json::object out;
  out["ledgerId"] = ledger_id_;
  out["version"] = version_;
  out["createdAt"] = created_at_;
  out["updatedAt"] = updated_at_;
  out["entries"] = std::move(entries);
  out["checksum"] = checksum();
  out["maxEntries"] = max_entries_;
  return out;
}

json::object ContextLedger::project(LedgerProjection mode, std::uint64_t since_version,
                                    std::size_t limit) const {
  if (mode == LedgerProjection::kFull) return to_json();
  if (mode == LedgerProjection::kSummary) {
    return json::object{{"ledgerId", ledger_id_},
                        {"version", version_},
                        {"checksum", checksum()},
                        {"entryCount", static_cast<std::uint64_t>(entries_.size()) + compacted_}};
  }
  json::array entries;
  std::uint64_t to_version = since_version;
  for (const auto& e : entries_) {
    if (e.version <= since_version) continue;
    if (entries.size() >= limit) break;
    entries.push_back(json::object{{"entryId", e.entry_id},
                                   {"version", e.version},
                                   {"timestamp", e.timestamp},
                                   {"operation", e.operation},
                                   {"contextDelta", e.context_delta}});
    to_version = e.version;
  }
  json::array removed;
  for (const auto& [version, constraint] : removed_) {
    if (version > since_version && version <= to_version) removed.push_back(constraint);
  }
  return json::object{{"ledgerId", ledger_id_},        {"mode", "delta"},
                      {"fromVersion", since_version},  {"toVersion", to_version},
                      {"entries", std::move(entries)}, {"removedConstraints", std::move(removed)},
                      {"checksum", checksum()}};
}

json::object ContextLedger::envelope_extension(std::uint64_t previous_version,
                                               const json::array& removed, bool stale) const {
  json::object o{{"required", true},
                 {"version", version_},
                 {"previousVersion", previous_version},
                 {"removedConstraints", removed}};
  if (stale) o["stale"] = true;
  return o;
}

std::string ContextLedger::checksum() const {
  std::uint64_t h = 1469598103934665603ULL;
  auto feed = [&](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ULL;
    }
  };
  feed(ledger_id_);
  for (const auto& e : entries_) {
    feed(std::to_string(e.version));
    feed(e.operation);
    feed(json::canonical(e.context_delta));
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string("fnv1a64:") + buf;
}

}  // namespace hearth::lafs
