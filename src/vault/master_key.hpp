#pragma once
/// The vault's master key: 32 random bytes in a 0600 file under the state dir, or from the
/// HEARTH_VAULT_KEY environment variable (for services). A type that cannot be printed, logged
/// or copied: no stream operator, no conversion to text; its bytes are wiped when it goes.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace hearth::vault {

class MasterKey {
 public:
  static constexpr std::size_t kSize = 32;
  static constexpr std::string_view kEnvironment = "HEARTH_VAULT_KEY";

  /// From $HEARTH_VAULT_KEY when it is set (64 hex digits, or base64 of 32 bytes), else the
  /// key file `file`, created with a fresh random key when absent.
  static Result<MasterKey> open(const std::filesystem::path& file);
  /// Reads `file`, creating it (0600, O_EXCL, fsynced) with a fresh key when it is absent. A
  /// file that others may read, or that is not a key, is refused.
  static Result<MasterKey> load_or_create(const std::filesystem::path& file);
  /// The key in an environment variable; nullopt when it is not set.
  static Result<std::optional<MasterKey>> from_env(std::string_view name = kEnvironment);
  /// A key from its bytes (tests).
  static MasterKey from_bytes(const std::array<std::uint8_t, kSize>& bytes);

  MasterKey(MasterKey&& other) noexcept;
  MasterKey& operator=(MasterKey&& other) noexcept;
  MasterKey(const MasterKey&) = delete;
  MasterKey& operator=(const MasterKey&) = delete;
  ~MasterKey();

  /// The bytes, for key derivation only.
  const std::uint8_t* data() const { return bytes_.data(); }
  /// A secret for one purpose outside the vault (64 hex digits: HMAC-SHA256 of `purpose` under
  /// the key): every daemon holding the same key derives the same, and it tells nothing of the
  /// key or of another purpose's secret. Empty if the hash fails.
  std::string derive(std::string_view purpose) const;

 private:
  MasterKey() = default;
  std::array<std::uint8_t, kSize> bytes_{};
};

}  // namespace hearth::vault
