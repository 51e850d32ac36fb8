#include "agentapp/store/semver.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <string>
#include <vector>

namespace hearth::agentapp {

namespace {

/// A partial version: parts given (0-3), wildcards stop it.
struct Partial {
  Version v{0, 0, 0};
  int parts = 0;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<Partial> parse_partial(std::string_view s) {
  if (!s.empty() && (s.front() == 'v' || s.front() == 'V')) s.remove_prefix(1);
  // Pre-release and build tags are not compared.
  if (auto cut = s.find_first_of("-+"); cut != std::string_view::npos) s = s.substr(0, cut);
  Partial p;
  if (s.empty() || s == "*" || s == "x" || s == "X") return p;
  while (!s.empty() && p.parts < 3) {
    const auto dot = s.find('.');
    const auto part = s.substr(0, dot);
    if (part == "*" || part == "x" || part == "X") break;
    long n = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
    if (ec != std::errc() || end != part.data() + part.size() || part.empty() || n < 0) {
      return std::nullopt;
    }
    p.v[static_cast<std::size_t>(p.parts++)] = n;
    if (dot == std::string_view::npos) return p;
    s.remove_prefix(dot + 1);
  }
  return s.empty() || s == "*" || s == "x" || s == "X" || p.parts == 3 ? std::optional(p)
                                                                       : std::nullopt;
}

/// The smallest version above every version `p` matches (`1.2` -> 1.3.0).
Version next_after(const Partial& p) {
  Version v = p.v;
  if (p.parts == 0) return {LONG_MAX, 0, 0};
  if (p.parts < 3) {
    v[static_cast<std::size_t>(p.parts - 1)] += 1;
    for (auto i = static_cast<std::size_t>(p.parts); i < 3; ++i) v[i] = 0;
  } else {
    v[2] += 1;
  }
  return v;
}

/// One comparator set: the half-open interval [low, high) with inclusivity handled by callers.
bool comparator(const Version& v, std::string_view c, bool& ok) {
  std::string_view op;
  for (std::string_view candidate : {">=", "<=", ">", "<", "=", "^", "~"}) {
    if (c.starts_with(candidate)) {
      op = candidate;
      break;
    }
  }
  c.remove_prefix(op.size());
  if (!op.empty() && trim(c).empty()) {  // an operator with no version after it
    ok = false;
    return false;
  }
  auto p = parse_partial(trim(c));
  if (!p) {
    ok = false;
    return false;
  }
  const Version low = p->v;
  if (op.empty() || op == "=") {
    return v >= low && (p->parts == 3 ? v == low : v < next_after(*p));
  }
  if (op == ">=") return v >= low;
  if (op == "<") return v < low;
  if (op == ">") return p->parts == 3 ? v > low : v >= next_after(*p);
  if (op == "<=") return p->parts == 3 ? v <= low : v < next_after(*p);
  if (op == "~") {
    // ~1.2.3 := >=1.2.3 <1.3.0; ~1 := 1.x
    Partial upper = *p;
    upper.parts = std::min(p->parts, 2);
    return v >= low && v < next_after(upper);
  }
  // ^: the first non-zero part of those given may not change.
  Partial upper = *p;
  upper.parts = 1;
  if (p->v[0] == 0 && p->parts >= 2) {
    upper.parts = (p->v[1] == 0 && p->parts == 3) ? 3 : 2;
  }
  if (p->parts == 0) return true;
  return v >= low && v < next_after(upper);
}

}  // namespace

std::optional<Version> parse_version(std::string_view text) {
  auto p = parse_partial(trim(text));
  if (!p || p->parts != 3) return std::nullopt;
  return p->v;
}

std::optional<bool> satisfies(const Version& version, std::string_view range) {
  bool any = false;
  while (true) {
    const auto bar = range.find("||");
    std::string_view set = trim(range.substr(0, bar));
    bool all = true;
    bool ok = true;
    if (const auto dash = set.find(" - "); dash != std::string_view::npos) {
      auto lo = parse_partial(trim(set.substr(0, dash)));
      auto hi = parse_partial(trim(set.substr(dash + 3)));
      if (!lo || !hi) return std::nullopt;
      all = version >= lo->v && (hi->parts == 3 ? version <= hi->v : version < next_after(*hi));
    } else {
      std::vector<std::string_view> parts;
      while (!set.empty()) {
        const auto space = set.find(' ');
        auto word = set.substr(0, space);
        set = space == std::string_view::npos ? std::string_view() : trim(set.substr(space));
        // ">= 1.2": an operator written apart from its version.
        if ((word == ">=" || word == "<=" || word == ">" || word == "<" || word == "=" ||
             word == "^" || word == "~") &&
            !set.empty()) {
          const auto next = set.find(' ');
          std::string joined(word);
          joined += set.substr(0, next);
          set = next == std::string_view::npos ? std::string_view() : trim(set.substr(next));
          if (!comparator(version, joined, ok)) all = false;
          if (!ok) return std::nullopt;
          continue;
        }
        if (!comparator(version, word, ok)) all = false;
        if (!ok) return std::nullopt;
      }
    }
    any = any || all;
    if (bar == std::string_view::npos) break;
    range.remove_prefix(bar + 2);
  }
  return any;
}

}  // namespace hearth::agentapp
