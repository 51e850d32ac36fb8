#include "a2s/search/spelling.hpp"

#include <algorithm>
#include <functional>
#include <unordered_set>

#include "common/suggest.hpp"

namespace hearth::a2s {
namespace {

std::uint64_t hash_of(std::string_view s) {
  // FNV-1a: stable across runs, cheap on short strings.
  std::uint64_t h = 1469598103934665603ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

/// `word` and its deletions of up to `edits` letters.
void deletions(std::string_view word, std::uint32_t edits, std::unordered_set<std::string>& out) {
  out.emplace(word);
  if (edits == 0 || word.size() <= 1) return;
  for (std::size_t i = 0; i < word.size(); ++i) {
    std::string shorter;
    shorter.reserve(word.size() - 1);
    shorter.append(word.substr(0, i));
    shorter.append(word.substr(i + 1));
    deletions(shorter, edits - 1, out);
  }
}

}  // namespace

std::uint32_t SpellingIndex::allowed(std::size_t length) {
  if (length <= 3) return 0;
  return length <= 7 ? 1 : 2;
}

SpellingIndex::SpellingIndex(std::vector<std::pair<std::string, std::uint32_t>> words)
    : words_(std::move(words)) {
  std::unordered_set<std::string> dels;
  for (std::uint32_t id = 0; id < words_.size(); ++id) {
    const std::string& w = words_[id].first;
    if (w.size() < 3) continue;
    // A query word within two edits is at least 8 letters (allowed()), so only words of 6 or
    // more need their two-letter deletions.
    dels.clear();
    deletions(w, w.size() >= 6 ? 2 : 1, dels);
    for (const auto& d : dels) deletes_.emplace_back(hash_of(d), id);
  }
  std::sort(deletes_.begin(), deletes_.end());
  deletes_.erase(std::unique(deletes_.begin(), deletes_.end()), deletes_.end());
  deletes_.shrink_to_fit();
}

std::vector<SpellingIndex::Correction> SpellingIndex::correct(std::string_view word,
                                                              std::size_t limit) const {
  std::vector<Correction> out;
  const std::uint32_t edits = allowed(word.size());
  if (edits == 0 || deletes_.empty()) return out;
  std::unordered_set<std::string> dels;
  deletions(word, edits, dels);
  std::unordered_set<std::uint32_t> checked;
  std::uint32_t best = edits + 1;
  for (const auto& d : dels) {
    const std::uint64_t h = hash_of(d);
    auto it = std::lower_bound(deletes_.begin(), deletes_.end(), std::make_pair(h, 0U));
    for (; it != deletes_.end() && it->first == h; ++it) {
      if (!checked.insert(it->second).second) continue;
      const std::string& candidate = words_[it->second].first;
      if (candidate == word) return {};  // spelt right
      const auto distance = static_cast<std::uint32_t>(edit_distance(word, candidate));
      if (distance > edits || distance > best) continue;
      if (distance < best) {
        best = distance;
        out.clear();
      }
      out.push_back({it->second, distance});
    }
  }
  std::sort(out.begin(), out.end(), [&](const Correction& a, const Correction& b) {
    if (words_[a.word].second != words_[b.word].second) {
      return words_[a.word].second > words_[b.word].second;
    }
    return words_[a.word].first < words_[b.word].first;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::size_t SpellingIndex::memory_bytes() const {
  std::size_t bytes = deletes_.capacity() * sizeof(deletes_[0]) + words_.capacity() * sizeof(words_[0]);
  for (const auto& [w, n] : words_) bytes += w.capacity();
  return bytes;
}

}  // namespace hearth::a2s
