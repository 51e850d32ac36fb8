#pragma once
/// Unpredictable identifiers and secrets from the kernel's CSPRNG (getrandom(2)).

#include <cstddef>
#include <string>

namespace hearth {

/// Fills `out` with `size` random bytes.
void random_bytes(void* out, std::size_t size);

/// `bytes` random bytes as lowercase hex (2 * bytes characters).
std::string random_hex(std::size_t bytes);

}  // namespace hearth
