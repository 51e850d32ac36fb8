#pragma once
/// Base64 (RFC 4648, standard alphabet, padded), for bytes that must travel in JSON strings.

#include <string>
#include <string_view>

namespace hearth {

std::string base64_encode(std::string_view bytes);

}  // namespace hearth
