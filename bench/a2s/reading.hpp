#pragma once
// How SearchIndex read a request, for the search benchmarks' miss lists: one line a word,
// "word (name): term/via 0.60 ...", each after `indent`.

#include <cstdio>
#include <string>
#include <string_view>

#include "a2s/search/search.hpp"

namespace hearth::a2s::bench {

inline std::string reading(const SearchIndex& index, std::string_view query,
                           std::string_view indent) {
  std::string out;
  for (const auto& w : index.interpret(query)) {
    if (!out.empty()) out += '\n';
    out += indent;
    out += w.word;
    out += w.name ? " (name):" : ":";
    for (const auto& t : w.terms) {
      char weight[32];
      std::snprintf(weight, sizeof weight, " %.2f", t.weight);
      out += " " + t.term + "/" + t.via + weight;
    }
  }
  return out;
}

}  // namespace hearth::a2s::bench
