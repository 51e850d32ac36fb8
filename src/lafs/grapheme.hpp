#pragma once
/// Extended grapheme clusters (Unicode UAX #29), counted: what the LAFS token estimate divides by
/// four (spec section 9.5.4: "count grapheme clusters, not bytes"). The property tables are
/// generated from ICU's Unicode 15.0 data (grapheme_table.inc), so hearth needs no ICU at run time.

#include <cstddef>
#include <string_view>

namespace hearth::lafs {

/// Number of extended grapheme clusters in UTF-8 text ("e\u0301" is 1, a family emoji is 1, a
/// flag is 1). Invalid UTF-8 bytes count one cluster each.
std::size_t count_graphemes(std::string_view utf8);

}  // namespace hearth::lafs
