#include "a2s/search/spelling.hpp"

#include <algorithm>
#include <unordered_set>

#include "common/suggest.hpp"

namespace hearth::a2s {
namespace {

/// FNV-1a of `word` without the letters at `skip1` and `skip2` (npos: none): stable across runs,
/// cheap on short strings, and no string is built for a deletion.
std::uint64_t hash_without(std::string_view word, std::size_t skip1, std::size_t skip2) {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (i == skip1 || i == skip2) continue;
    h ^= static_cast<unsigned char>(word[i]);
    h *= 1099511628211ULL;
  }
  return h;
}

/// The hashes of `word` and of its deletions of up to `edits` (1 or 2) letters. Deleting either
/// of two equal neighbours gives the same string: duplicates are harmless.
template <typename Out>
void deletions(std::string_view word, std::uint32_t edits, Out&& out) {
  constexpr auto kNone = std::string_view::npos;
  out(hash_without(word, kNone, kNone));
  if (edits == 0 || word.size() <= 1) return;
  for (std::size_t i = 0; i < word.size(); ++i) {
    out(hash_without(word, i, kNone));
    if (edits < 2 || word.size() <= 2) continue;
    for (std::size_t j = i + 1; j < word.size(); ++j) out(hash_without(word, i, j));
  }
}

}  // namespace

std::uint32_t SpellingIndex::allowed(std::size_t length) {
  if (length <= 3) return 0;
  return length <= 7 ? 1 : 2;
}

SpellingIndex::SpellingIndex(std::vector<std::pair<std::string, std::uint32_t>> words)
    : words_(std::move(words)) {
  std::sort(words_.begin(), words_.end());
  for (std::uint32_t id = 0; id < words_.size(); ++id) {
    const std::string& w = words_[id].first;
    if (w.size() < 3 || w.size() > kLongestWord) continue;
    longest_ = std::max(longest_, w.size());
    // A query word within two edits is at least 8 letters (allowed()), so only words of 6 or
    // more need their two-letter deletions.
    deletions(w, w.size() >= 6 ? 2 : 1, [&](std::uint64_t h) { deletes_.emplace_back(h, id); });
  }
  std::sort(deletes_.begin(), deletes_.end());
  deletes_.erase(std::unique(deletes_.begin(), deletes_.end()), deletes_.end());
  deletes_.shrink_to_fit();
}

std::vector<SpellingIndex::Correction> SpellingIndex::correct(std::string_view word,
                                                              std::size_t limit) const {
  std::vector<Correction> out;
  const std::uint32_t edits = allowed(word.size());
  // A word longer than every vocabulary word by more than the edits allowed has no correction,
  // and its deletions would cost the cube of its length (a request's word is the client's).
  if (edits == 0 || deletes_.empty() || word.size() > longest_ + edits) return out;
  std::vector<std::uint64_t> hashes;
  deletions(word, edits, [&](std::uint64_t h) { hashes.push_back(h); });
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  std::unordered_set<std::uint32_t> checked;
  std::uint32_t best = edits + 1;
  for (const auto h : hashes) {
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

bool SpellingIndex::contains(std::string_view word) const {
  auto it = std::lower_bound(words_.begin(), words_.end(), word,
                             [](const auto& entry, std::string_view w) { return entry.first < w; });
  return it != words_.end() && it->first == word;
}

std::size_t SpellingIndex::memory_bytes() const {
  std::size_t bytes =
      deletes_.capacity() * sizeof(deletes_[0]) + words_.capacity() * sizeof(words_[0]);
  for (const auto& [w, n] : words_) bytes += w.capacity();
  return bytes;
}

}  // namespace hearth::a2s
