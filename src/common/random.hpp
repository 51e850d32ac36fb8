#pragma once
/// Unpredictable identifiers and secrets from the kernel's CSPRNG (getrandom(2)).

#include <string>

namespace hearth {

/// `bytes` random bytes as lowercase hex (2 * bytes characters).
std::string random_hex(std::size_t bytes);

}  // namespace hearth
