#include "a2s/search/thesaurus.hpp"

#include <algorithm>

namespace hearth::a2s {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

/// The comma-separated items of one side, each as its terms; false if one has none or too many,
/// or, among the words looked up (`keys`), if a phrase keeps a single word: that word alone
/// would be looked up, wherever the request has it ("id check" as "check").
bool side(std::string_view text, const Thesaurus::Terms& terms, bool keys,
          std::vector<std::vector<std::string>>& out, std::string& why) {
  while (true) {
    const auto comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    auto t = terms(item);
    if (t.empty()) {
      why = item.empty() ? "an empty item" : "\"" + std::string(item) + "\" has only stop words";
      return false;
    }
    if (keys && t.size() == 1 && item.find(' ') != std::string_view::npos) {
      why = "\"" + std::string(item) + "\" is one word but for stop words; write that word";
      return false;
    }
    if (t.size() > Thesaurus::kLongest) {
      why = "\"" + std::string(item) + "\" is longer than 3 words";
      return false;
    }
    out.push_back(std::move(t));
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

std::string Thesaurus::key(std::span<const std::string> terms) {
  std::size_t size = terms.size();
  for (const auto& t : terms) size += t.size();
  std::string k;
  k.reserve(size);
  for (const auto& t : terms) {
    if (!k.empty()) k += ' ';
    k += t;
  }
  return k;
}

void Thesaurus::add(const std::vector<std::string>& from, const std::vector<std::string>& to) {
  auto& into = table_[key(from)];
  for (const auto& t : to) {
    // A phrase's own words are matched as themselves already.
    if (std::find(from.begin(), from.end(), t) != from.end()) continue;
    if (std::find(into.begin(), into.end(), t) == into.end()) into.push_back(t);
  }
}

Thesaurus Thesaurus::parse(std::string_view text, const Terms& terms,
                           std::vector<std::string>* errors) {
  Thesaurus out;
  std::size_t number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::vector<std::string>> from;
    std::vector<std::vector<std::string>> to;
    std::string why;
    const auto arrow = line.find("=>");
    bool ok = false;
    if (arrow != std::string_view::npos) {
      ok = side(line.substr(0, arrow), terms, true, from, why) &&
           side(line.substr(arrow + 2), terms, false, to, why);
    } else {
      ok = side(line, terms, true, from, why);
      if (ok && from.size() < 2) {
        ok = false;
        why = "one item and no \"=>\"";
      }
      to = from;
    }
    if (!ok) {
      if (errors != nullptr) errors->push_back("line " + std::to_string(number) + ": " + why);
      continue;
    }
    std::vector<std::string> flat;
    for (const auto& f : from) {
      flat.clear();
      for (const auto& t : to) {
        if (t == f) continue;  // a word that means the same is not its own expansion
        flat.insert(flat.end(), t.begin(), t.end());
      }
      out.add(f, flat);
    }
  }
  std::erase_if(out.table_, [](const auto& entry) { return entry.second.empty(); });
  return out;
}

std::vector<std::string> Thesaurus::word_keys() const {
  std::vector<std::string> out;
  for (const auto& [key, unused] : table_) {
    if (key.find(' ') == std::string::npos) out.push_back(key);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<std::string>* Thesaurus::find(const std::string& key) const {
  auto it = table_.find(key);
  return it == table_.end() ? nullptr : &it->second;
}

}  // namespace hearth::a2s
