#include "vault/master_key.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/ascii.hpp"
#include "common/fd.hpp"
#include "common/random.hpp"

namespace hearth::vault {
namespace {

Error key_error(const std::string& message) {
  return Error::make(ErrorCode::kInternalError, "vault: " + message);
}

/// 64 hex digits or base64 of 32 bytes (surrounding whitespace ignored).
std::optional<std::array<std::uint8_t, MasterKey::kSize>> decode(std::string_view text) {
  text = ascii::trim(text, " \t\r\n");
  std::array<std::uint8_t, MasterKey::kSize> out{};
  if (text.size() == 2 * MasterKey::kSize &&
      std::all_of(text.begin(), text.end(), [](char c) { return ascii::is_hex_digit(c); })) {
    for (std::size_t i = 0; i < MasterKey::kSize; ++i) {
      out[i] = static_cast<std::uint8_t>(ascii::hex_value(text[2 * i]) * 16 +
                                         ascii::hex_value(text[2 * i + 1]));
    }
    return out;
  }
  // Base64 of 32 bytes: 44 characters with one '=' of padding.
  if (text.size() != 44 || text[43] != '=' || text[42] == '=') return std::nullopt;
  unsigned char decoded[33];
  const int n = EVP_DecodeBlock(decoded, reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n != 33) return std::nullopt;
  std::memcpy(out.data(), decoded, MasterKey::kSize);
  OPENSSL_cleanse(decoded, sizeof decoded);
  return out;
}

std::string to_hex(const std::uint8_t* data, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += kHex[data[i] >> 4];
    out += kHex[data[i] & 0xf];
  }
  return out;
}

}  // namespace

MasterKey MasterKey::from_bytes(const std::array<std::uint8_t, kSize>& bytes) {
  MasterKey key;
  key.bytes_ = bytes;
  return key;
}

MasterKey::MasterKey(MasterKey&& other) noexcept : bytes_(other.bytes_) {
  OPENSSL_cleanse(other.bytes_.data(), kSize);
}

MasterKey& MasterKey::operator=(MasterKey&& other) noexcept {
  if (this != &other) {
    bytes_ = other.bytes_;
    OPENSSL_cleanse(other.bytes_.data(), kSize);
  }
  return *this;
}

MasterKey::~MasterKey() {
  OPENSSL_cleanse(bytes_.data(), kSize);
}

Result<std::optional<MasterKey>> MasterKey::from_env(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr) return std::optional<MasterKey>{};
  auto bytes = decode(value);
  if (!bytes) {
    return key_error("$" + std::string(name) + " must be 64 hex digits or the base64 of 32 bytes");
  }
  auto key = from_bytes(*bytes);
  OPENSSL_cleanse(bytes->data(), kSize);
  return std::optional<MasterKey>(std::move(key));
}

Result<MasterKey> MasterKey::load_or_create(const std::filesystem::path& file) {
  Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd && errno == ENOENT) {
    // Create it: a fresh key, written whole and synced before anything is sealed with it.
    // From the kernel's CSPRNG (getrandom), which is also what OpenSSL's generator is seeded
    // from: making a key does not start OpenSSL's random generator in the daemon.
    std::array<std::uint8_t, kSize> bytes{};
    random_bytes(bytes.data(), kSize);
    std::string text = to_hex(bytes.data(), kSize) + "\n";
    Fd out(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!out) {
      OPENSSL_cleanse(bytes.data(), kSize);
      if (errno == EEXIST) return load_or_create(file);  // another process made it first
      return key_error("cannot create " + file.string() + ": " + std::strerror(errno));
    }
    const bool written =
        ::write(out.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
        ::fsync(out.get()) == 0;
    OPENSSL_cleanse(text.data(), text.size());
    if (!written) {
      OPENSSL_cleanse(bytes.data(), kSize);
      ::unlink(file.c_str());
      return key_error("cannot write " + file.string() + ": " + std::strerror(errno));
    }
    // The folder entry too, so the key outlives a crash right after the first vault write.
    Fd dir(::open(file.parent_path().empty() ? "." : file.parent_path().c_str(),
                  O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir) ::fsync(dir.get());
    auto key = from_bytes(bytes);
    OPENSSL_cleanse(bytes.data(), kSize);
    return key;
  }
  if (!fd) return key_error("cannot read " + file.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return key_error(file.string() + " is not a regular file");
  }
  if ((st.st_mode & 0077) != 0) {
    return key_error(file.string() + " may be read by others (mode " +
                     std::to_string(st.st_mode & 0777) +
                     " in octal digits of chmod): make it 0600 (chmod 600) and consider the "
                     "key exposed");
  }
  if (st.st_uid != ::geteuid()) return key_error(file.string() + " belongs to another user");
  char buf[256];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n <= 0) return key_error("cannot read " + file.string());
  auto bytes = decode(std::string_view(buf, static_cast<std::size_t>(n)));
  OPENSSL_cleanse(buf, sizeof buf);
  if (!bytes) {
    return key_error(file.string() + " is not a vault key (64 hex digits)");
  }
  auto key = from_bytes(*bytes);
  OPENSSL_cleanse(bytes->data(), kSize);
  return key;
}

Result<MasterKey> MasterKey::open(const std::filesystem::path& file) {
  HEARTH_ASSIGN_OR_RETURN(auto env, from_env());
  if (env) return std::move(*env);
  return load_or_create(file);
}

std::string MasterKey::derive(std::string_view purpose) const {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), bytes_.data(), static_cast<int>(bytes_.size()),
           reinterpret_cast<const unsigned char*>(purpose.data()), purpose.size(), mac.data(),
           &length) == nullptr) {
    return {};
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::size_t{length} * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 0xf];
  }
  OPENSSL_cleanse(mac.data(), mac.size());
  return out;
}

}  // namespace hearth::vault
