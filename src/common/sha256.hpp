#pragma once
/// SHA-256 (OpenSSL) as lowercase hex: package and manifest hashes, checksums, evidence chains.

#include <memory>
#include <string>
#include <string_view>

namespace hearth {

/// Bytes as lowercase hex, two digits a byte.
std::string to_hex(std::string_view bytes);

/// The SHA-256 of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

/// SHA-256 fed piece by piece.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  /// The digest as 64 lowercase hex digits; the object is spent after it.
  std::string hex();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace hearth
