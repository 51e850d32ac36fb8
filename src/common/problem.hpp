#pragma once
/// Load-time problems (manifests, configuration): each names the exact JSON path it is about,
/// e.g. {"endpoints[1].handler.timeout", "must be a non-negative number of milliseconds"}.

#include <string>
#include <string_view>
#include <vector>

namespace hearth {

struct Problem {
  std::string path;     ///< JSON path in the document; empty for the document itself
  std::string message;  ///< what is wrong, phrased to follow "path: "

  std::string to_string() const { return path.empty() ? message : path + ": " + message; }
};

using Problems = std::vector<Problem>;

/// Joins JSON path segments: join_path("endpoints[1]", "handler") -> "endpoints[1].handler".
inline std::string join_path(std::string_view base, std::string_view key) {
  if (base.empty()) return std::string(key);
  std::string out(base);
  out += '.';
  out += key;
  return out;
}
inline std::string index_path(std::string_view base, std::size_t index) {
  return std::string(base) + "[" + std::to_string(index) + "]";
}

}  // namespace hearth
