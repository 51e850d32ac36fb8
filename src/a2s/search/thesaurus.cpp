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

/// One item of a side: its terms, and whether it is a quoted phrase (all its words kept).
struct Item {
  std::vector<std::string> terms;
  bool literal = false;
};

/// Reads one item of a side into `out`; returns why it is malformed, or nothing: it has no
/// terms or too many or, among the words looked up (`keys`), is a phrase that keeps a single
/// word (that word alone would be looked up wherever the request has it: "id check" as
/// "check"). A quoted item is for the words looked up, read by `every_word`.
std::string read_item(std::string_view item, const Thesaurus::Terms& terms,
                      const Thesaurus::Terms& every_word, bool keys, Item& out) {
  const bool literal = item.size() >= 2 && item.front() == '"' && item.back() == '"';
  if (literal) item = item.substr(1, item.size() - 2);
  const std::string name = "\"" + std::string(item) + "\"";
  if (literal) {
    if (!keys || !every_word) return "a quoted phrase " + name + " where only words are read";
    out.terms = every_word(item);
    out.literal = true;
    const std::size_t content = terms(item).size();
    if (content == 0) return name + " has only stop words";
    if (out.terms.size() == content) return name + " has no stop word; write it without quotes";
    if (out.terms.size() > Thesaurus::kLongestLiteral) return name + " is longer than 4 words";
    return {};
  }
  out.terms = terms(item);
  if (out.terms.empty()) return item.empty() ? "an empty item" : name + " has only stop words";
  if (keys && out.terms.size() == 1 && item.find(' ') != std::string_view::npos) {
    return name + " is one word but for stop words; write that word, or quote the phrase";
  }
  if (out.terms.size() > Thesaurus::kLongest) return name + " is longer than 3 words";
  return {};
}

/// The comma-separated items of one side; false, and why, at the first malformed one.
bool side(std::string_view text, const Thesaurus::Terms& terms, const Thesaurus::Terms& every_word,
          bool keys, std::vector<Item>& out, std::string& why) {
  while (true) {
    const auto comma = text.find(',');
    Item item;
    why = read_item(trim(text.substr(0, comma)), terms, every_word, keys, item);
    if (!why.empty()) return false;
    out.push_back(std::move(item));
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

void Thesaurus::add(Table& table, const std::vector<std::string>& from,
                    const std::vector<std::string>& to) {
  auto& into = table[key(from)];
  for (const auto& t : to) {
    // A phrase's own words are matched as themselves already.
    if (std::find(from.begin(), from.end(), t) != from.end()) continue;
    if (std::find(into.begin(), into.end(), t) == into.end()) into.push_back(t);
  }
}

Thesaurus Thesaurus::parse(std::string_view text, const Terms& terms,
                           std::vector<std::string>* errors, const Terms& every_word) {
  Thesaurus out;
  std::size_t number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    std::vector<Item> from;
    std::vector<Item> to;
    std::string why;
    const auto arrow = line.find("=>");
    bool ok = false;
    if (arrow != std::string_view::npos) {
      ok = side(line.substr(0, arrow), terms, every_word, true, from, why) &&
           side(line.substr(arrow + 2), terms, every_word, false, to, why);
    } else {
      // Words that mean the same are terms as well as words: none may be quoted.
      ok = side(line, terms, {}, true, from, why);
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
        if (t.terms == f.terms) continue;  // a word that means the same is not its own expansion
        flat.insert(flat.end(), t.terms.begin(), t.terms.end());
      }
      add(f.literal ? out.literal_ : out.table_, f.terms, flat);
    }
  }
  for (auto* table : {&out.table_, &out.literal_}) {
    std::erase_if(*table, [](const auto& entry) { return entry.second.empty(); });
  }
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

std::vector<std::string> Thesaurus::phrase_words() const {
  std::vector<std::string> out;
  for (const Table* table : {&table_, &literal_}) {
    for (const auto& [key, unused] : *table) {
      if (key.find(' ') == std::string::npos) continue;
      for (std::size_t at = 0; at <= key.size();) {
        const std::size_t end = std::min(key.find(' ', at), key.size());
        out.emplace_back(key, at, end - at);
        at = end + 1;
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const std::vector<std::string>* Thesaurus::find(const std::string& key) const {
  auto it = table_.find(key);
  return it == table_.end() ? nullptr : &it->second;
}

const std::vector<std::string>* Thesaurus::find_literal(const std::string& key) const {
  auto it = literal_.find(key);
  return it == literal_.end() ? nullptr : &it->second;
}

}  // namespace hearth::a2s
