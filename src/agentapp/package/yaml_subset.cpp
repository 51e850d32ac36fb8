#include "agentapp/package/yaml_subset.hpp"

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agentapp/package/jsv.hpp"

namespace hearth::agentapp {

namespace {

/// A container being filled. The parser keeps pointers to open containers while their parents
/// grow, so they live in nodes of their own and become JSON at the end.
struct Node {
  bool is_array = false;
  /// Object members in first-assignment order; a member is a scalar or a child node.
  struct Member {
    std::string key;
    json::value scalar;
    Node* child = nullptr;
  };
  std::vector<Member> members;  // objects
  std::vector<Member> items;    // arrays (key unused)

  /// The object's prototype when a `__proto__` line made one (jsv::kPrototypeKey).
  Node* proto = nullptr;

  void set(std::string_view key, json::value scalar, Node* child) {
    // `parent[key] = v`. Writing `__proto__` in JavaScript replaces the object's prototype
    // with an object or array, and does nothing with another value.
    if (key == "__proto__") {
      if (child != nullptr) proto = child;
      return;
    }
    for (auto& m : members) {
      if (m.key == key) {
        m.scalar = std::move(scalar);
        m.child = child;
        return;
      }
    }
    members.push_back({std::string(key), std::move(scalar), child});
  }
};

struct Tree {
  std::vector<std::unique_ptr<Node>> nodes;
  Node* make(bool is_array) {
    nodes.push_back(std::make_unique<Node>());
    nodes.back()->is_array = is_array;
    return nodes.back().get();
  }
};

json::value to_json(const Node& node) {
  if (node.is_array) {
    json::array a;
    a.reserve(node.items.size());
    for (const auto& item : node.items) {
      a.push_back(item.child ? to_json(*item.child) : item.scalar);
    }
    return a;
  }
  json::object o;
  o.reserve(node.members.size());
  for (const auto& m : node.members) o[m.key] = m.child ? to_json(*m.child) : m.scalar;
  if (node.proto != nullptr) o[jsv::kPrototypeKey] = to_json(*node.proto);
  return o;
}

bool is_number_text(std::string_view s) {
  // /^-?\d+(\.\d+)?$/
  std::size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  const auto digits = [&s, &i] {
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (!digits()) return false;
  if (i == s.size()) return true;
  if (s[i] != '.') return false;
  ++i;
  return digits() && i == s.size();
}

std::size_t leading_spaces(std::string_view line) {
  std::size_t n = 0;
  while (n < line.size() && line[n] == ' ') ++n;
  return n;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool meaningful(std::string_view line) {
  const auto t = jsv::trim(line);
  return !t.empty() && t.front() != '#';
}

/// `parseKeyValueInto`: "k: v" of a list item's first line.
void key_value_into(Tree& tree, Node& target, std::string_view payload) {
  const auto colon = payload.find(':');
  const auto key = jsv::trim(payload.substr(0, colon));
  const auto value = jsv::trim(payload.substr(colon + 1));
  if (value.empty()) {
    target.set(key, {}, tree.make(false));
  } else {
    target.set(key, parse_subset_scalar(value), nullptr);
  }
}

}  // namespace

json::value parse_subset_scalar(std::string_view value) {
  std::string_view unquoted = value;
  if (value.size() >= 1 && ((value.front() == '"' && value.back() == '"') ||
                            (value.front() == '\'' && value.back() == '\''))) {
    // JavaScript's slice(1, -1): a lone quote becomes "".
    unquoted = value.size() >= 2 ? value.substr(1, value.size() - 2) : std::string_view{};
  }
  if (unquoted == "true") return true;
  if (unquoted == "false") return false;
  if (unquoted == "null") return nullptr;
  if (is_number_text(unquoted)) return std::strtod(std::string(unquoted).c_str(), nullptr);
  if (unquoted.size() >= 2 && unquoted.front() == '[' && unquoted.back() == ']') {
    json::array out;
    std::string_view rest = unquoted.substr(1, unquoted.size() - 2);
    while (true) {
      const auto comma = rest.find(',');
      json::value part = parse_subset_scalar(jsv::trim(rest.substr(0, comma)));
      if (!(part.is_string() && part.get_string().empty())) out.push_back(std::move(part));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    return out;
  }
  // "[" alone: startsWith('[') && endsWith(']') is false for it, so it stays a string.
  return json::string(unquoted);
}

json::object parse_yaml_subset(std::string_view source) {
  Tree tree;
  Node* root = tree.make(false);
  struct Open {
    long indent;
    Node* node;
  };
  std::vector<Open> stack{{-1, root}};

  std::vector<std::string_view> lines;
  for (std::size_t start = 0;;) {
    const auto nl = source.find('\n', start);
    lines.push_back(source.substr(start, nl == std::string_view::npos ? nl : nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }

  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view raw = lines[i];
    const std::string_view trimmed = jsv::trim(raw);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    const auto indent = static_cast<long>(leading_spaces(raw));
    while (stack.size() > 1 && indent <= stack.back().indent) stack.pop_back();
    Node& parent = *stack.back().node;

    if (starts_with(trimmed, "- ")) {
      if (!parent.is_array) continue;
      const std::string_view payload = jsv::trim(trimmed.substr(2));
      if (payload.empty()) {
        Node* item = tree.make(false);
        parent.items.push_back({{}, {}, item});
        stack.push_back({indent, item});
        continue;
      }
      if (payload.find(':') != std::string_view::npos) {
        Node* item = tree.make(false);
        parent.items.push_back({{}, {}, item});
        key_value_into(tree, *item, payload);
        stack.push_back({indent, item});
      } else {
        parent.items.push_back({{}, parse_subset_scalar(payload), nullptr});
      }
      continue;
    }

    const auto colon = trimmed.find(':');
    if (colon == std::string_view::npos || parent.is_array) continue;
    const std::string_view key = jsv::trim(trimmed.substr(0, colon));
    const std::string_view value = jsv::trim(trimmed.substr(colon + 1));
    if (value.empty()) {
      bool list = false;
      for (std::size_t j = i + 1; j < lines.size(); ++j) {
        if (meaningful(lines[j])) {
          list = starts_with(jsv::trim(lines[j]), "- ");
          break;
        }
      }
      Node* container = tree.make(list);
      parent.set(key, {}, container);
      stack.push_back({indent, container});
    } else {
      parent.set(key, parse_subset_scalar(value), nullptr);
    }
  }
  return std::move(to_json(*root).as_object());
}

std::optional<std::string_view> front_matter(std::string_view content) {
  // /^---\n([\s\S]*?)\n---/
  if (!starts_with(content, "---\n")) return std::nullopt;
  const auto end = content.find("\n---", 4);
  if (end == std::string_view::npos) return std::nullopt;
  return content.substr(4, end - 4);
}

}  // namespace hearth::agentapp
