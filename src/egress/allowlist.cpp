#include "egress/allowlist.hpp"

#include <algorithm>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace hearth::egress {
namespace {

Error entry_error(std::size_t index, std::string_view entry, std::string_view reason) {
  std::string message = "network access entry " + std::to_string(index) + " '" + printable(entry) +
                        "': " + std::string(reason);
  boost::json::object data;
  data["index"] = index;
  data["entry"] = entry;
  return Error::make(ErrorCode::kInvalidParams, std::move(message), std::move(data));
}

}  // namespace

Result<AllowList> AllowList::parse(const std::vector<std::string>& entries) {
  AllowList list;
  list.rules_.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::string_view entry = entries[i];
    Rule rule;
    std::string_view authority_text = entry;
    if (entry.starts_with("*.")) {
      rule.kind = Rule::Kind::kSuffix;
      authority_text.remove_prefix(2);
    }
    if (authority_text.find('*') != std::string_view::npos) {
      return entry_error(i, entry,
                         "'*' is only allowed as a whole first label, as in *.example.com");
    }
    auto authority = parse_authority(authority_text);
    if (!authority) return entry_error(i, entry, authority.error().message);
    rule.host = std::move(authority->host);
    rule.port = authority->port.value_or(0);
    if (rule.kind == Rule::Kind::kSuffix) {
      if (rule.host.is_address()) {
        return entry_error(i, entry, "a wildcard applies to names, not to IP addresses");
      }
      if (rule.host.text.find('.') == std::string::npos) {
        return entry_error(i, entry, "a wildcard needs a suffix of at least two labels");
      }
    }
    list.rules_.push_back(std::move(rule));
  }
  list.entries_ = entries;
  return list;
}

bool AllowList::allows(std::string_view host, std::uint16_t port) const {
  auto canonical = parse_host(host);
  return canonical && allows(*canonical, port);
}

bool AllowList::allows(const Host& host, std::uint16_t port) const {
  return std::any_of(rules_.begin(), rules_.end(), [&](const Rule& rule) {
    if (rule.port != 0 && rule.port != port) return false;
    if (rule.host.kind != host.kind) return false;
    if (rule.kind == Rule::Kind::kExact) return rule.host.text == host.text;
    const std::string& suffix = rule.host.text;
    return host.text.size() > suffix.size() + 1 && host.text.ends_with(suffix) &&
           host.text[host.text.size() - suffix.size() - 1] == '.';
  });
}

}  // namespace hearth::egress
