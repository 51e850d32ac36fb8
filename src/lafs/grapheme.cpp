#include "lafs/grapheme.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "lafs/formats.hpp"

namespace hearth::lafs {

namespace {

// Grapheme_Cluster_Break values, plus Extended_Pictographic folded in as its own class (such
// code points are all GCB=Other); numbering shared with grapheme_table_gen.cpp.
enum Gcb : std::uint8_t {
  kOther = 0,
  kCR,
  kLF,
  kControl,
  kExtend,
  kZwj,
  kRegionalIndicator,
  kPrepend,
  kSpacingMark,
  kL,
  kV,
  kT,
  kLV,
  kLVT,
  kPictographic,
};

struct Range {
  char32_t first;
  char32_t last;
  std::uint8_t cls;
};

constexpr Range kRanges[] = {
#include "lafs/grapheme_table.inc"
};

Gcb class_of(char32_t c) {
  if (c < 0x20) return c == '\r' ? kCR : c == '\n' ? kLF : kControl;
  if (c < 0x7F) return kOther;  // printable ASCII: the common case, no search
  const Range* end = std::end(kRanges);
  const Range* it = std::upper_bound(std::begin(kRanges), end, c,
                                     [](char32_t v, const Range& r) { return v < r.first; });
  if (it == std::begin(kRanges)) return kOther;
  --it;
  return c <= it->last ? static_cast<Gcb>(it->cls) : kOther;
}

}  // namespace

std::size_t count_graphemes(std::string_view s) {
  std::size_t clusters = 0;
  std::size_t i = 0;
  Gcb prev = kOther;
  bool first = true;
  // GB11: inside "ExtPict Extend* ZWJ" a following ExtPict does not break.
  bool pict_run = false;  // the cluster so far is ExtPict Extend*
  bool pict_zwj = false;  // ... followed by a ZWJ
  int ri_run = 0;         // regional indicators in a row (GB12/13 pair them)
  while (i < s.size()) {
    const Gcb cur = class_of(next_code_point(s, i));
    bool brk = true;
    // One branch per rule of UAX #29, in its order, even where two give the same answer.
    // NOLINTNEXTLINE(bugprone-branch-clone)
    if (first) {
      brk = true;
    } else if (prev == kCR && cur == kLF) {
      brk = false;  // GB3
    } else if (prev == kCR || prev == kLF || prev == kControl || cur == kCR || cur == kLF ||
               cur == kControl) {
      brk = true;  // GB4, GB5
    } else if (prev == kL && (cur == kL || cur == kV || cur == kLV || cur == kLVT)) {
      brk = false;  // GB6
    } else if ((prev == kLV || prev == kV) && (cur == kV || cur == kT)) {
      brk = false;  // GB7
    } else if ((prev == kLVT || prev == kT) && cur == kT) {
      brk = false;  // GB8
    } else if (cur == kExtend || cur == kZwj || cur == kSpacingMark || prev == kPrepend) {
      brk = false;  // GB9, GB9a, GB9b
    } else if (prev == kZwj && pict_zwj && cur == kPictographic) {
      brk = false;  // GB11
    } else if (prev == kRegionalIndicator && cur == kRegionalIndicator && ri_run % 2 == 1) {
      brk = false;  // GB12, GB13
    }
    if (brk) ++clusters;

    // State for GB11 and GB12/13.
    if (cur == kPictographic) {
      pict_run = true;
      pict_zwj = false;
    } else if (cur == kExtend && pict_run && !pict_zwj) {
      // still ExtPict Extend*
    } else if (cur == kZwj && pict_run && !pict_zwj) {
      pict_zwj = true;
    } else {
      pict_run = false;
      pict_zwj = false;
    }
    ri_run = cur == kRegionalIndicator ? ri_run + 1 : 0;
    prev = cur;
    first = false;
  }
  return clusters;
}

}  // namespace hearth::lafs
