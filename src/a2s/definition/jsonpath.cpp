#include "a2s/definition/jsonpath.hpp"

#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "common/ascii.hpp"

namespace hearth::a2s {
namespace {

struct Step {
  bool index = false;
  std::size_t position = 0;
  std::string name;
};

std::optional<std::vector<Step>> parse(std::string_view path) {
  if (path.empty() || path.front() != '$') return std::nullopt;
  std::vector<Step> steps;
  std::size_t i = 1;
  while (i < path.size()) {
    if (path[i] == '.') {
      const std::size_t start = ++i;
      while (i < path.size() && (ascii::is_alnum(path[i]) || path[i] == '_' || path[i] == '-' ||
                                 static_cast<unsigned char>(path[i]) >= 0x80)) {
        ++i;
      }
      if (i == start) return std::nullopt;
      steps.push_back({false, 0, std::string(path.substr(start, i - start))});
      continue;
    }
    if (path[i] == '[') {
      ++i;
      if (i < path.size() && (path[i] == '\'' || path[i] == '"')) {
        const char quote = path[i++];
        const auto close = path.find(quote, i);
        if (close == std::string_view::npos || close + 1 >= path.size() || path[close + 1] != ']') {
          return std::nullopt;
        }
        steps.push_back({false, 0, std::string(path.substr(i, close - i))});
        i = close + 2;
        continue;
      }
      const auto close = path.find(']', i);
      if (close == std::string_view::npos || close == i) return std::nullopt;
      std::size_t n = 0;
      auto [end, ec] = std::from_chars(path.data() + i, path.data() + close, n);
      if (ec != std::errc() || end != path.data() + close) return std::nullopt;
      steps.push_back({true, n, {}});
      i = close + 1;
      continue;
    }
    return std::nullopt;
  }
  return steps;
}

}  // namespace

bool valid_path(std::string_view path) {
  return parse(path).has_value();
}

const json::value* select(const json::value& root, std::string_view path) {
  const auto steps = parse(path);
  if (!steps) return nullptr;
  const json::value* at = &root;
  for (const auto& step : *steps) {
    if (step.index) {
      if (!at->is_array() || step.position >= at->get_array().size()) return nullptr;
      at = &at->get_array()[step.position];
    } else {
      if (!at->is_object()) return nullptr;
      at = at->get_object().if_contains(step.name);
      if (at == nullptr) return nullptr;
    }
  }
  return at;
}

}  // namespace hearth::a2s
