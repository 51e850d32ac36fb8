#include "jail/glob.hpp"

namespace hearth::jail {
namespace {

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto pos = s.find('/', start);
    if (pos == std::string_view::npos) pos = s.size();
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
  return out;
}

// Matches a bracket class starting at pattern[i] == '['. Sets `next` past the closing ']'.
// Returns false with next == npos when the class is not closed (then '[' is a literal).
bool match_class(std::string_view p, std::size_t i, char c, std::size_t& next) {
  std::size_t j = i + 1;
  bool negate = false;
  if (j < p.size() && (p[j] == '!' || p[j] == '^')) {
    negate = true;
    ++j;
  }
  bool matched = false;
  bool first = true;
  while (j < p.size() && (p[j] != ']' || first)) {
    first = false;
    char lo = p[j];
    if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
      char hi = p[j + 2];
      if (lo <= c && c <= hi) matched = true;
      j += 3;
    } else {
      if (lo == c) matched = true;
      ++j;
    }
  }
  if (j >= p.size()) {
    next = std::string_view::npos;
    return false;
  }
  next = j + 1;
  return matched != negate;
}

// One path segment against one pattern segment (no '/').
bool match_segment(std::string_view p, std::string_view s) {
  std::size_t pi = 0, si = 0;
  std::size_t star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size()) {
      char pc = p[pi];
      if (pc == '*') {
        star_p = pi++;
        star_s = si;
        continue;
      }
      if (pc == '?') {
        ++pi;
        ++si;
        continue;
      }
      if (pc == '[') {
        std::size_t next = 0;
        bool ok = match_class(p, pi, s[si], next);
        if (next != std::string_view::npos) {
          if (ok) {
            pi = next;
            ++si;
            continue;
          }
        } else if (s[si] == '[') {  // unclosed: literal '['
          ++pi;
          ++si;
          continue;
        }
      } else if (pc == s[si]) {
        ++pi;
        ++si;
        continue;
      }
    }
    if (star_p != std::string_view::npos) {
      pi = star_p + 1;
      si = ++star_s;
      continue;
    }
    return false;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

// Whole-path match over segments, by dynamic programming so that patterns with many `**` stay
// O(pattern segments x path segments) on client-supplied paths.
bool match_segments(const std::vector<std::string_view>& p,
                    const std::vector<std::string_view>& s) {
  const std::size_t np = p.size(), ns = s.size();
  // ok[i][j]: p[i..] matches s[j..]
  std::vector<std::vector<char>> ok(np + 1, std::vector<char>(ns + 1, 0));
  ok[np][ns] = 1;
  for (std::size_t i = np; i-- > 0;) {
    for (std::size_t j = ns + 1; j-- > 0;) {
      if (p[i] == "**") {
        ok[i][j] = static_cast<char>(ok[i + 1][j] || (j < ns && ok[i][j + 1]));
      } else {
        ok[i][j] = static_cast<char>(j < ns && ok[i + 1][j + 1] && match_segment(p[i], s[j]));
      }
    }
  }
  return ok[0][0] != 0;
}

std::string normalise_pattern(std::string_view pattern) {
  while (pattern.substr(0, 2) == "./") pattern.remove_prefix(2);
  std::string out(pattern);
  if (!out.empty() && out.back() == '/') out += "**";
  return out;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
  std::string p = normalise_pattern(pattern);
  if (p.empty()) return false;
  return match_segments(split(p), split(path));
}

GlobSet::GlobSet(const std::vector<std::string>& patterns) {
  for (const auto& raw : patterns) {
    std::string_view p(raw);
    if (!p.empty() && p.front() == '!') {
      exclude_.push_back(normalise_pattern(p.substr(1)));
    } else {
      include_.push_back(normalise_pattern(p));
    }
  }
}

bool GlobSet::allows(std::string_view relative_path) const {
  bool included = false;
  for (const auto& p : include_) {
    if (glob_match(p, relative_path)) {
      included = true;
      break;
    }
  }
  return included && !excluded(relative_path);
}

bool GlobSet::excluded(std::string_view relative_path) const {
  if (exclude_.empty()) return false;
  // The path itself and each folder above it: "a/b/c", then "a/b", then "a".
  std::string_view path = relative_path;
  for (;;) {
    if (!path.empty()) {
      for (const auto& p : exclude_) {
        if (glob_match(p, path)) return true;
      }
    }
    const auto slash = path.rfind('/');
    if (slash == std::string_view::npos) return false;
    path = path.substr(0, slash);
  }
}

PathVerdict check_requested_path(const std::filesystem::path& dir, const GlobSet& globs,
                                 std::string_view requested, std::filesystem::path& rel) {
  const std::filesystem::path p{std::string(requested)};
  rel = p.is_absolute() ? p.lexically_normal().lexically_relative(dir) : p.lexically_normal();
  if (rel.empty() || rel == "." || *rel.begin() == "..") return PathVerdict::kOutside;
  return globs.allows(rel.generic_string()) ? PathVerdict::kAllowed : PathVerdict::kNotCovered;
}

bool real_path_allowed(const std::filesystem::path& dir, const GlobSet& globs,
                       const std::filesystem::path& real) {
  const auto rel = real.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != ".." && rel != "." && globs.allows(rel.generic_string());
}

}  // namespace hearth::jail
