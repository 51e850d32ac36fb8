#include "json/patch.hpp"

#include <charconv>
#include <optional>
#include <vector>

namespace hearth::json {

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (const char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

void diff_into(const value& from, const value& to, const std::string& path, array& out) {
  if (from == to) return;
  if (from.is_object() && to.is_object()) {
    const auto& a = from.get_object();
    const auto& b = to.get_object();
    for (const auto& member : a) {
      const std::string child = path + "/" + escape_pointer_token(member.key());
      if (const auto* other = b.if_contains(member.key())) {
        diff_into(member.value(), *other, child, out);
      } else {
        out.push_back(object{{"op", "remove"}, {"path", child}});
      }
    }
    for (const auto& member : b) {
      if (a.contains(member.key())) continue;
      out.push_back(object{{"op", "add"},
                           {"path", path + "/" + escape_pointer_token(member.key())},
                           {"value", member.value()}});
    }
    return;
  }
  if (from.is_array() && to.is_array()) {
    const auto& a = from.get_array();
    const auto& b = to.get_array();
    const std::size_t common = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < common; ++i) {
      diff_into(a[i], b[i], path + "/" + std::to_string(i), out);
    }
    // Removed from the end backwards, so that each index is valid when its operation runs.
    for (std::size_t i = a.size(); i > common; --i) {
      out.push_back(object{{"op", "remove"}, {"path", path + "/" + std::to_string(i - 1)}});
    }
    for (std::size_t i = common; i < b.size(); ++i) {
      out.push_back(object{{"op", "add"}, {"path", path + "/-"}, {"value", b[i]}});
    }
    return;
  }
  out.push_back(object{{"op", "replace"}, {"path", path}, {"value", to}});
}

/// A pointer split into unescaped tokens; nullopt when it is malformed.
std::optional<std::vector<std::string>> tokens_of(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') return std::nullopt;
  std::size_t i = 1;
  for (;;) {
    std::string token;
    for (; i < pointer.size() && pointer[i] != '/'; ++i) {
      if (pointer[i] == '~') {
        if (i + 1 >= pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1')) {
          return std::nullopt;
        }
        token += pointer[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += pointer[i];
      }
    }
    tokens.push_back(std::move(token));
    if (i >= pointer.size()) break;
    ++i;
  }
  return tokens;
}

/// An array index token: digits without a leading zero; nullopt otherwise.
std::optional<std::size_t> index_of(const std::string& token) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return std::nullopt;
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), n);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return n;
}

value* walk(value& document, const std::vector<std::string>& tokens, std::size_t count) {
  value* at = &document;
  for (std::size_t i = 0; i < count; ++i) {
    if (auto* o = at->if_object()) {
      at = o->if_contains(tokens[i]);
    } else if (auto* a = at->if_array()) {
      const auto index = index_of(tokens[i]);
      at = index && *index < a->size() ? &(*a)[*index] : nullptr;
    } else {
      at = nullptr;
    }
    if (at == nullptr) return nullptr;
  }
  return at;
}

Error op_error(std::size_t index, const std::string& message) {
  return Error::make(ErrorCode::kInvalidParams, "patch[" + std::to_string(index) + "]: " + message);
}

Status add_at(value& document, const std::vector<std::string>& tokens, value v) {
  if (tokens.empty()) {
    document = std::move(v);
    return {};
  }
  value* parent = walk(document, tokens, tokens.size() - 1);
  if (parent == nullptr) return Error::make(ErrorCode::kInvalidParams, "its parent does not exist");
  const std::string& last = tokens.back();
  if (auto* o = parent->if_object()) {
    (*o)[last] = std::move(v);
    return {};
  }
  if (auto* a = parent->if_array()) {
    if (last == "-") {
      a->push_back(std::move(v));
      return {};
    }
    const auto index = index_of(last);
    if (!index || *index > a->size()) {
      return Error::make(ErrorCode::kInvalidParams, "the array index is out of range");
    }
    a->insert(a->begin() + static_cast<std::ptrdiff_t>(*index), std::move(v));
    return {};
  }
  return Error::make(ErrorCode::kInvalidParams, "its parent is neither an object nor an array");
}

Result<value> remove_at(value& document, const std::vector<std::string>& tokens) {
  if (tokens.empty()) return Error::make(ErrorCode::kInvalidParams, "the root cannot be removed");
  value* parent = walk(document, tokens, tokens.size() - 1);
  if (parent == nullptr) return Error::make(ErrorCode::kInvalidParams, "the path does not exist");
  if (auto* o = parent->if_object()) {
    auto it = o->find(tokens.back());
    if (it == o->end()) return Error::make(ErrorCode::kInvalidParams, "the path does not exist");
    value removed = std::move(it->value());
    o->erase(it);
    return removed;
  }
  if (auto* a = parent->if_array()) {
    const auto index = index_of(tokens.back());
    if (!index || *index >= a->size()) {
      return Error::make(ErrorCode::kInvalidParams, "the path does not exist");
    }
    value removed = std::move((*a)[*index]);
    a->erase(a->begin() + static_cast<std::ptrdiff_t>(*index));
    return removed;
  }
  return Error::make(ErrorCode::kInvalidParams, "the path does not exist");
}

Status apply_one(value& document, const object& op) {
  const auto* name = op.if_contains("op");
  const auto* path = op.if_contains("path");
  if (name == nullptr || !name->is_string() || path == nullptr || !path->is_string()) {
    return Error::make(ErrorCode::kInvalidParams, "needs string members op and path");
  }
  auto tokens = tokens_of(path->get_string());
  if (!tokens) return Error::make(ErrorCode::kInvalidParams, "path is not a JSON Pointer");
  const std::string_view kind = name->get_string();
  const auto* v = op.if_contains("value");
  if (kind == "add") {
    if (v == nullptr) return Error::make(ErrorCode::kInvalidParams, "add needs a value");
    return add_at(document, *tokens, *v);
  }
  if (kind == "remove") {
    auto removed = remove_at(document, *tokens);
    if (!removed.ok()) return removed.error();
    return {};
  }
  if (kind == "replace") {
    if (v == nullptr) return Error::make(ErrorCode::kInvalidParams, "replace needs a value");
    value* target = walk(document, *tokens, tokens->size());
    if (target == nullptr) return Error::make(ErrorCode::kInvalidParams, "the path does not exist");
    *target = *v;
    return {};
  }
  if (kind == "test") {
    if (v == nullptr) return Error::make(ErrorCode::kInvalidParams, "test needs a value");
    const value* target = walk(document, *tokens, tokens->size());
    if (target == nullptr || *target != *v) {
      return Error::make(ErrorCode::kInvalidParams, "the value differs from the test's");
    }
    return {};
  }
  if (kind == "move" || kind == "copy") {
    const auto* from = op.if_contains("from");
    if (from == nullptr || !from->is_string()) {
      return Error::make(ErrorCode::kInvalidParams, std::string(kind) + " needs a string from");
    }
    auto from_tokens = tokens_of(from->get_string());
    if (!from_tokens) return Error::make(ErrorCode::kInvalidParams, "from is not a JSON Pointer");
    if (kind == "copy") {
      const value* source = walk(document, *from_tokens, from_tokens->size());
      if (source == nullptr) {
        return Error::make(ErrorCode::kInvalidParams, "from does not exist");
      }
      return add_at(document, *tokens, *source);
    }
    const std::string_view f = from->get_string();
    const std::string_view p = path->get_string();
    if (p.size() > f.size() && p.substr(0, f.size()) == f && p[f.size()] == '/') {
      return Error::make(ErrorCode::kInvalidParams, "a value cannot be moved into itself");
    }
    auto removed = remove_at(document, *from_tokens);
    if (!removed.ok()) return removed.error();
    return add_at(document, *tokens, std::move(removed).value());
  }
  return Error::make(ErrorCode::kInvalidParams, "unknown op '" + std::string(kind) + "'");
}

}  // namespace

array diff(const value& from, const value& to, std::string_view base) {
  array out;
  diff_into(from, to, std::string(base), out);
  return out;
}

Status apply_patch(value& document, const array& patch) {
  value work = document;
  for (std::size_t i = 0; i < patch.size(); ++i) {
    if (!patch[i].is_object()) return op_error(i, "an operation must be an object");
    if (auto st = apply_one(work, patch[i].get_object()); !st.ok()) {
      return op_error(i, st.error().message);
    }
  }
  document = std::move(work);
  return {};
}

const value* find_pointer(const value& document, std::string_view pointer) {
  auto tokens = tokens_of(pointer);
  if (!tokens) return nullptr;
  return walk(const_cast<value&>(document), *tokens, tokens->size());
}

}  // namespace hearth::json
