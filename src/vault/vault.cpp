#include "vault/vault.hpp"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "common/ascii.hpp"
#include "common/atomic_file.hpp"
#include "common/fd.hpp"
#include "json/json.hpp"
#include "storage/storage.hpp"

namespace hearth::vault {
namespace {

constexpr std::size_t kKeySize = 32;
constexpr std::size_t kNonceSize = 12;
constexpr std::size_t kTagSize = 16;
constexpr std::string_view kCheckText = "hearth vault key check";

using Key = std::array<std::uint8_t, kKeySize>;

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Error internal(const std::string& message) {
  return Error::make(ErrorCode::kInternalError, "vault: " + message);
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || !(ascii::is_alpha(name[0]) || name[0] == '_')) {
    return false;
  }
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return ascii::is_alnum(c) || c == '_'; });
}

/// A domain: a host name (letters, digits, '-', '_', '.') with an optional ":port".
bool valid_domain(std::string_view scope) {
  if (scope.empty() || scope.size() > 260 || scope == kGlobal) return false;
  const auto colon = scope.rfind(':');
  std::string_view host = scope.substr(0, colon);
  if (colon != std::string_view::npos) {
    const auto port = scope.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return ascii::is_digit(c); })) {
      return false;
    }
  }
  if (host.empty() || host.front() == '.' || host.back() == '.') return false;
  return std::all_of(host.begin(), host.end(),
                     [](char c) { return ascii::is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

/// The scope as stored: "global", or the domain lower-cased.
Result<std::string> scope_of(std::string_view scope) {
  const std::string lower = ascii::lower(scope);
  if (lower == kGlobal) return lower;
  if (!valid_domain(lower)) {
    return Error::make(ErrorCode::kInvalidParams,
                       "vault: '" + std::string(scope) +
                           "' is neither a domain (host or host:port) nor \"global\"");
  }
  return lower;
}

Status check_name(std::string_view name) {
  if (!valid_name(name)) {
    return Error::make(ErrorCode::kInvalidParams,
                       "vault: '" + std::string(name) +
                           "' is not a variable name ([A-Za-z_][A-Za-z0-9_]*, at most 128)");
  }
  return Status{};
}

/// The associated data that binds a sealed value to its row: a value moved to another scope,
/// name or version no longer opens.
std::string associated_data(std::string_view scope, std::string_view name, std::int64_t version) {
  std::string aad = "hearth-vault-v1";
  aad += '\0';
  aad += scope;
  aad += '\0';
  aad += name;
  aad += '\0';
  aad += std::to_string(version);
  return aad;
}

bool hkdf(const std::uint8_t* master, const std::string& salt, const std::string& info, Key& out) {
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
  if (ctx == nullptr) return false;
  std::size_t length = out.size();
  const bool ok =
      EVP_PKEY_derive_init(ctx) > 0 && EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0 &&
      EVP_PKEY_CTX_set1_hkdf_salt(ctx, reinterpret_cast<const unsigned char*>(salt.data()),
                                  static_cast<int>(salt.size())) > 0 &&
      EVP_PKEY_CTX_set1_hkdf_key(ctx, master, static_cast<int>(MasterKey::kSize)) > 0 &&
      EVP_PKEY_CTX_add1_hkdf_info(ctx, reinterpret_cast<const unsigned char*>(info.data()),
                                  static_cast<int>(info.size())) > 0 &&
      EVP_PKEY_derive(ctx, out.data(), &length) > 0 && length == out.size();
  EVP_PKEY_CTX_free(ctx);
  return ok;
}

/// AES-256-GCM: nonce || ciphertext || tag.
std::optional<std::string> seal(const Key& key, std::string_view plain, const std::string& aad) {
  std::string out(kNonceSize + plain.size() + kTagSize, '\0');
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  if (RAND_bytes(bytes, static_cast<int>(kNonceSize)) != 1) return std::nullopt;
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return std::nullopt;
  int len = 0;
  int final_len = 0;
  const bool ok =
      EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key.data(), bytes) == 1 &&
      EVP_EncryptUpdate(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(aad.data()),
                        static_cast<int>(aad.size())) == 1 &&
      EVP_EncryptUpdate(ctx, bytes + kNonceSize, &len,
                        reinterpret_cast<const unsigned char*>(plain.data()),
                        static_cast<int>(plain.size())) == 1 &&
      EVP_EncryptFinal_ex(ctx, bytes + kNonceSize + len, &final_len) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagSize),
                          bytes + kNonceSize + plain.size()) == 1;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) return std::nullopt;
  return out;
}

/// nullopt when the tag does not verify (tampered, moved, or another key).
std::optional<std::string> open_sealed(const Key& key, const std::string& sealed,
                                       const std::string& aad) {
  if (sealed.size() < kNonceSize + kTagSize) return std::nullopt;
  const auto* bytes = reinterpret_cast<const unsigned char*>(sealed.data());
  const std::size_t n = sealed.size() - kNonceSize - kTagSize;
  std::string plain(n, '\0');
  std::array<unsigned char, kTagSize> tag{};
  std::copy(bytes + kNonceSize + n, bytes + sealed.size(), tag.begin());
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return std::nullopt;
  int len = 0;
  int final_len = 0;
  const bool ok =
      EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key.data(), bytes) == 1 &&
      EVP_DecryptUpdate(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(aad.data()),
                        static_cast<int>(aad.size())) == 1 &&
      EVP_DecryptUpdate(ctx, reinterpret_cast<unsigned char*>(plain.data()), &len,
                        bytes + kNonceSize, static_cast<int>(n)) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagSize), tag.data()) == 1 &&
      EVP_DecryptFinal_ex(ctx, reinterpret_cast<unsigned char*>(plain.data()) + len, &final_len) ==
          1;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) {
    OPENSSL_cleanse(plain.data(), plain.size());
    return std::nullopt;
  }
  return plain;
}

const std::vector<storage::Migration>& migrations() {
  static const std::vector<storage::Migration> kMigrations = {
      {1,
       "CREATE TABLE vault_meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);"
       "CREATE TABLE variables (scope TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT "
       "NULL, sealed BLOB NOT NULL, expires_at INTEGER, updated_at INTEGER NOT NULL, size "
       "INTEGER NOT NULL, PRIMARY KEY (scope, name));"
       "CREATE TABLE trust_grants (domain TEXT NOT NULL, name TEXT NOT NULL, granted_at "
       "INTEGER NOT NULL, PRIMARY KEY (domain, name));"},
  };
  return kMigrations;
}

// --- generations: what makes a rolled-back vault file visible --------------------------------
//
// The database keeps `generation` in vault_meta: the generation (8 bytes, big-endian) and an
// HMAC-SHA256 over it, the salt and every row of the variables and trust_grants tables, under a
// key derived from the master key (HKDF, info kStateInfo). Every write advances it in the same
// transaction as the change. The record file keeps the last generation this key wrote, MAC'd
// under another derived key and bound to the database's file name; it is written after the
// database commits (a kill in between leaves the database one ahead, which is accepted and the
// record repaired), always under the lock file so that writers never move it backwards.

constexpr std::string_view kStateInfo = "hearth vault v1 state";
constexpr std::string_view kRecordInfo = "hearth vault v1 generation record";
constexpr std::string_view kFingerprintInfo = "hearth vault v1 key fingerprint";
/// The HKDF salt of the two keys made from the master key alone (the record's name and MAC do
/// not depend on a vault's own salt, so a new vault under the same key continues the count).
constexpr std::string_view kKeyOnlySalt = "hearth vault v1 key-only";
constexpr std::string_view kRecordMagic = "hearth-vault-generation-v1";
constexpr std::size_t kMacSize = 32;
constexpr std::size_t kMaxRecordBytes = 256;

std::string hex_of(const unsigned char* data, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 0xf];
  }
  return out;
}

std::string big_endian(std::int64_t n) {
  std::string out(8, '\0');
  auto u = static_cast<std::uint64_t>(n);
  for (int i = 7; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  return out;
}

std::int64_t from_big_endian(std::string_view bytes) {
  std::uint64_t u = 0;
  for (const char c : bytes.substr(0, 8)) u = (u << 8) | static_cast<unsigned char>(c);
  return static_cast<std::int64_t>(u);
}

/// HMAC-SHA256 fed piece by piece, each piece framed so that no two inputs encode alike.
class Hmac {
 public:
  explicit Hmac(const Key& key) {
    mac_ = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    ctx_ = mac_ != nullptr ? EVP_MAC_CTX_new(mac_) : nullptr;
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                                 OSSL_PARAM_construct_end()};
    ok_ = ctx_ != nullptr && EVP_MAC_init(ctx_, key.data(), key.size(), params) == 1;
  }
  ~Hmac() {
    EVP_MAC_CTX_free(ctx_);
    EVP_MAC_free(mac_);
  }
  Hmac(const Hmac&) = delete;
  Hmac& operator=(const Hmac&) = delete;

  void number(std::int64_t n) { raw(big_endian(n)); }
  void text(std::string_view s) {
    number(static_cast<std::int64_t>(s.size()));
    raw(s);
  }
  /// A column value: a type tag, then the value (texts and blobs with their length).
  void value(const storage::Value& v) {
    if (std::holds_alternative<std::nullptr_t>(v)) {
      raw("n");
    } else if (const auto* i = std::get_if<std::int64_t>(&v)) {
      raw("i");
      number(*i);
    } else if (const auto* d = std::get_if<double>(&v)) {
      raw("d");
      std::uint64_t bits = 0;
      std::memcpy(&bits, d, sizeof bits);
      number(static_cast<std::int64_t>(bits));
    } else if (const auto* t = std::get_if<std::string>(&v)) {
      raw("t");
      text(*t);
    } else {
      raw("b");
      text(std::get<storage::Blob>(v).bytes);
    }
  }
  std::optional<std::string> finish() {
    std::string out(kMacSize, '\0');
    std::size_t length = 0;
    if (!ok_ ||
        EVP_MAC_final(ctx_, reinterpret_cast<unsigned char*>(out.data()), &length, out.size()) !=
            1 ||
        length != kMacSize) {
      return std::nullopt;
    }
    return out;
  }

 private:
  void raw(std::string_view data) {
    ok_ = ok_ && EVP_MAC_update(ctx_, reinterpret_cast<const unsigned char*>(data.data()),
                                data.size()) == 1;
  }
  EVP_MAC* mac_ = nullptr;
  EVP_MAC_CTX* ctx_ = nullptr;
  bool ok_ = false;
};

bool same_mac(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

/// An exclusive flock, released when it goes.
class FileLock {
 public:
  static Result<FileLock> take(int fd, const std::filesystem::path& file) {
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        return internal("cannot lock " + file.string() + ": " + std::strerror(errno));
      }
    }
    return FileLock(fd);
  }
  FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() {
    if (fd_ >= 0) ::flock(fd_, LOCK_UN);
  }

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

/// The record file, as read: absent, a valid generation, or present but not valid.
struct Record {
  bool present = false;
  std::optional<std::int64_t> generation;
};

/// The database's generation row, as read: absent, or present with its generation when the MAC
/// authenticates it and the content.
struct StoredGeneration {
  bool present = false;
  std::optional<std::int64_t> authentic;
};

/// Shown after every refusal: how an operator takes the vault as it is on purpose.
std::string accept_hint(const std::filesystem::path& file) {
  const auto dir = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
  return "hearth vault accept-rollback --state-dir " + dir.string();
}

}  // namespace

struct Vault::Impl {
  std::unique_ptr<storage::Database> db;
  std::optional<MasterKey> master;
  std::string salt;
  // Opening at first use: what to open, and whether it is done (db is set once, under the
  // mutex, before `opened` says so).
  std::filesystem::path db_file;
  KeySource key_source;
  std::shared_ptr<storage::Engine> engine;  ///< where the tables are (SQLite: db_file)
  std::mutex open_mutex;
  std::atomic<bool> opened{false};
  std::mutex keys_mutex;
  std::map<std::string, Key> keys;  ///< derived per scope, wiped on close
  std::mutex observer_mutex;
  ReadObserver observer;
  // Generations (above): the file as opened, its record and lock file, and the data_version
  // (SQLite's count of other connections' commits) at which the generation was last checked.
  std::filesystem::path file;
  std::filesystem::path record_file;
  Key record_key{};
  Fd lock_fd;
  /// Held with the lock file's flock: a flock belongs to the open file, so it does not keep
  /// this process's own threads apart.
  std::mutex generation_mutex;
  std::optional<std::int64_t> checked_version;

  Impl() = default;
  ~Impl() {
    for (auto& [scope, key] : keys) OPENSSL_cleanse(key.data(), key.size());
    OPENSSL_cleanse(record_key.data(), record_key.size());
  }

  Result<Key> key_for(const std::string& info) {
    std::lock_guard lock(keys_mutex);
    auto it = keys.find(info);
    if (it != keys.end()) return it->second;
    Key key{};
    if (!hkdf(master->data(), salt, info, key)) return internal("key derivation failed");
    keys.emplace(info, key);
    return key;
  }

  Result<Key> scope_key(const std::string& scope) { return key_for("hearth vault v1 " + scope); }

  Result<std::optional<Secret>> read(const std::string& scope, std::string_view name) {
    HEARTH_ASSIGN_OR_RETURN(
        auto rows,
        db->query("SELECT version, sealed, expires_at FROM variables WHERE scope = ? AND "
                  "name = ?",
                  {scope, std::string(name)}));
    if (rows.empty()) return std::optional<Secret>{};
    const auto& row = rows.front();
    const auto* version = std::get_if<std::int64_t>(&row[0]);
    const auto* sealed = std::get_if<storage::Blob>(&row[1]);
    const std::string what = scope + "::" + std::string(name);
    if (version == nullptr || sealed == nullptr) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "vault: " + what + " was tampered with (its row is malformed)");
    }
    HEARTH_ASSIGN_OR_RETURN(auto key, scope_key(scope));
    auto plain = open_sealed(key, sealed->bytes, associated_data(scope, name, *version));
    OPENSSL_cleanse(key.data(), key.size());
    if (!plain) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "vault: " + what + " was tampered with (authentication failed)");
    }
    Secret secret;
    secret.value = std::move(*plain);
    secret.version = *version;
    if (const auto* expires = std::get_if<std::int64_t>(&row[2])) {
      secret.expires_at = *expires;
      if (*expires <= now_seconds()) return std::optional<Secret>{};
    }
    return std::optional<Secret>(std::move(secret));
  }

  /// Writes a value as version `next` (the caller holds the transaction).
  Status write(const std::string& scope, std::string_view name, std::string_view value,
               std::optional<std::int64_t> expires_at, std::int64_t next) {
    HEARTH_ASSIGN_OR_RETURN(auto key, scope_key(scope));
    auto sealed = seal(key, value, associated_data(scope, name, next));
    OPENSSL_cleanse(key.data(), key.size());
    if (!sealed) return internal("sealing failed");
    storage::Value expires = nullptr;
    if (expires_at) expires = *expires_at;
    HEARTH_RETURN_IF_ERROR(db->execute(
        "INSERT INTO variables (scope, name, version, sealed, expires_at, updated_at, size) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope, name) DO UPDATE SET version = "
        "excluded.version, sealed = excluded.sealed, expires_at = excluded.expires_at, "
        "updated_at = excluded.updated_at, size = excluded.size",
        {scope, std::string(name), next, storage::Blob{std::move(*sealed)}, expires, now_seconds(),
         static_cast<std::int64_t>(value.size())}));
    return Status{};
  }

  Result<std::int64_t> stored_version(const std::string& scope, std::string_view name) {
    HEARTH_ASSIGN_OR_RETURN(auto rows, db->query("SELECT version FROM variables WHERE scope = ? "
                                                 "AND name = ?",
                                                 {scope, std::string(name)}));
    if (rows.empty()) return std::int64_t{0};
    const auto* v = std::get_if<std::int64_t>(&rows.front()[0]);
    return v != nullptr ? *v : std::int64_t{0};
  }

  Status open_with(const std::filesystem::path& file, MasterKey key,
                   RollbackAcceptance* accepting = nullptr);
  /// Opens the vault if it is not open yet (a vault made by open_on_first_use), then checks
  /// its generation again when another connection wrote to it since the last check.
  Status ready();

  // --- generations ---
  Result<std::string> state_mac(std::int64_t generation) {
    HEARTH_ASSIGN_OR_RETURN(auto key, key_for(std::string(kStateInfo)));
    Hmac mac(key);
    OPENSSL_cleanse(key.data(), key.size());
    HEARTH_ASSIGN_OR_RETURN(auto variables,
                            db->query("SELECT scope, name, version, sealed, expires_at, "
                                      "updated_at, size FROM variables ORDER BY scope, name"));
    HEARTH_ASSIGN_OR_RETURN(auto grants, db->query("SELECT domain, name, granted_at FROM "
                                                   "trust_grants ORDER BY domain, name"));
    mac.text("hearth-vault-state-v1");
    mac.text(salt);
    mac.number(generation);
    for (const auto* rows : {&variables, &grants}) {
      mac.number(static_cast<std::int64_t>(rows->size()));
      for (const auto& row : *rows) {
        mac.number(static_cast<std::int64_t>(row.size()));
        for (const auto& v : row) mac.value(v);
      }
    }
    auto out = mac.finish();
    if (!out) return internal("HMAC failed");
    return std::move(*out);
  }

  Result<StoredGeneration> stored_generation() {
    HEARTH_ASSIGN_OR_RETURN(auto rows,
                            db->query("SELECT value FROM vault_meta WHERE key = 'generation'"));
    StoredGeneration out;
    if (rows.empty()) return out;
    out.present = true;
    const auto* blob = std::get_if<storage::Blob>(&rows.front()[0]);
    if (blob == nullptr || blob->bytes.size() != 8 + kMacSize) return out;
    const std::int64_t generation = from_big_endian(blob->bytes);
    if (generation < 1) return out;
    HEARTH_ASSIGN_OR_RETURN(auto expected, state_mac(generation));
    if (same_mac(expected, std::string_view(blob->bytes).substr(8))) out.authentic = generation;
    return out;
  }

  /// Writes the generation row for the content as it is now (inside the caller's transaction).
  Status store_generation(std::int64_t generation) {
    HEARTH_ASSIGN_OR_RETURN(auto mac, state_mac(generation));
    HEARTH_RETURN_IF_ERROR(db->execute(
        "INSERT INTO vault_meta (key, value) VALUES ('generation', ?) ON CONFLICT (key) DO "
        "UPDATE SET value = excluded.value",
        {storage::Blob{big_endian(generation) + mac}}));
    return Status{};
  }

  std::optional<std::string> record_mac(std::int64_t generation) const {
    Hmac mac(record_key);
    mac.text(kRecordMagic);
    mac.text(file.filename().string());
    mac.number(generation);
    return mac.finish();
  }

  Result<Record> read_record() const {
    Record out;
    Fd fd(::open(record_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) {
      if (errno == ENOENT) return out;
      if (errno == ELOOP) {
        out.present = true;  // a symbolic link is not a record this key wrote
        return out;
      }
      return internal("cannot read " + record_file.string() + ": " + std::strerror(errno));
    }
    out.present = true;
    char buf[kMaxRecordBytes + 1];
    std::size_t n = 0;
    while (n < sizeof buf) {
      const ssize_t got = ::read(fd.get(), buf + n, sizeof buf - n);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        return internal("cannot read " + record_file.string() + ": " + std::strerror(errno));
      }
      if (got == 0) break;
      n += static_cast<std::size_t>(got);
    }
    // "hearth-vault-generation-v1 <generation> <hex HMAC>\n"
    std::string_view text(buf, n);
    if (n > kMaxRecordBytes || !text.starts_with(kRecordMagic) || !text.ends_with('\n')) {
      return out;
    }
    text.remove_prefix(kRecordMagic.size());
    text.remove_suffix(1);
    if (text.empty() || text.front() != ' ') return out;
    text.remove_prefix(1);
    const auto space = text.find(' ');
    if (space == std::string_view::npos || space == 0 || space > 18) return out;
    const auto digits = text.substr(0, space);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return ascii::is_digit(c); }) ||
        (digits.size() > 1 && digits.front() == '0')) {
      return out;
    }
    const std::int64_t generation = std::stoll(std::string(digits));
    const auto mac = record_mac(generation);
    if (generation < 1 || !mac ||
        !same_mac(hex_of(reinterpret_cast<const unsigned char*>(mac->data()), mac->size()),
                  text.substr(space + 1))) {
      return out;
    }
    out.generation = generation;
    return out;
  }

  /// Replaces the record atomically (temporary file, fsync, rename, folder fsync; 0600).
  Status write_record(std::int64_t generation) const {
    const auto mac = record_mac(generation);
    if (!mac) return internal("HMAC failed");
    const std::string text =
        std::string(kRecordMagic) + " " + std::to_string(generation) + " " +
        hex_of(reinterpret_cast<const unsigned char*>(mac->data()), mac->size()) + "\n";
    return write_file_atomic(record_file, text, {.mode = 0600});
  }

  /// Why the vault must not be used as it is, or nothing. `fresh`: the database was just made
  /// (it holds nothing an older copy could bring back).
  std::optional<Error> refusal(const StoredGeneration& stored, const Record& record,
                               bool fresh) const {
    json::object data{{"file", file.string()}, {"record", record_file.string()}};
    if (stored.authentic) data["fileGeneration"] = *stored.authentic;
    if (record.generation) data["recordedGeneration"] = *record.generation;
    const std::string hint = accept_hint(file);
    if (record.present && !record.generation) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "vault: the generation record " + record_file.string() +
                             " was tampered with (it does not verify under this key): restore "
                             "it, or accept the vault file as it is on purpose with `" +
                             hint + "`",
                         data);
    }
    if (stored.present && !stored.authentic) {
      return Error::make(
          ErrorCode::kPermissionDenied,
          "vault: " + file.string() +
              " was tampered with: its content does not match its authenticated generation "
              "(rows edited, added or removed outside hearth, or rows of an older copy mixed "
              "in); restore the newest copy, or accept it as it is on purpose with `" +
              hint + "` and check its grants (hearth vault list)",
          data);
    }
    // A daemon that joins a shared database has no record yet: the database's generation
    // becomes its record (what it guards against from then on is a database older than that).
    if (stored.authentic && !record.present && !engine->shared()) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "vault: the generation record " + record_file.string() +
                             " is missing, but " + file.string() + " is at generation " +
                             std::to_string(*stored.authentic) +
                             ": the record was deleted, or the vault file was copied here "
                             "without it; restore the record, or accept this vault file on "
                             "purpose with `" +
                             hint + "`",
                         data);
    }
    const std::int64_t own = stored.authentic.value_or(0);
    const bool older = stored.authentic ? own < *record.generation
                                        : !fresh && record.generation && *record.generation >= 2;
    if (older) {
      return Error::make(
          ErrorCode::kPermissionDenied,
          "vault: " + file.string() + " is older than the last one this key wrote (generation " +
              std::to_string(own) + " < " + std::to_string(*record.generation) +
              (stored.present ? "" : ", a copy from before generations were kept") +
              "): it was rolled back or replaced; restore the newest copy, or accept this one "
              "on purpose with `" +
              hint + "` (what was written after it stays lost)",
          data);
    }
    return std::nullopt;
  }

  /// What establish() leaves to do once the transaction commits.
  struct Established {
    std::int64_t generation = 0;  ///< the database's generation, verified (or just written)
    bool write_record = false;    ///< the record must be brought up to it
  };

  /// With the lock file held and inside a write transaction: checks the database's generation
  /// against the record and decides what to write. A database without a generation (a new one,
  /// or one from before hearth kept them) gets one: the record is first made at 1 when there is
  /// none, then the database is written at the record's generation + 1, so a kill at any point
  /// leaves an accepted state and an older copy never passes as new. `accepting`: the operator's
  /// accept_rollback; a refusal is then reported there and the content made the newest
  /// generation instead.
  Result<Established> establish(bool fresh, RollbackAcceptance* accepting) {
    HEARTH_ASSIGN_OR_RETURN(auto stored, stored_generation());
    HEARTH_ASSIGN_OR_RETURN(auto record, read_record());
    Established out;
    std::int64_t next = 0;  // a generation to write, 0: none
    if (auto refused = refusal(stored, record, fresh)) {
      if (accepting == nullptr) return std::move(*refused);
      accepting->accepted = refused->message;
      next =
          std::max({stored.authentic.value_or(0), record.generation.value_or(0), std::int64_t{1}}) +
          1;
    } else if (!stored.present) {
      if (!record.present) {
        HEARTH_RETURN_IF_ERROR(write_record(1));
        record.generation = 1;
      }
      next = *record.generation + 1;
    }
    if (accepting != nullptr) {
      accepting->file_generation = stored.authentic;
      accepting->recorded_generation = record.generation;
    }
    if (next != 0) {
      HEARTH_RETURN_IF_ERROR(store_generation(next));
      out.generation = next;
      out.write_record = true;
    } else {
      out.generation = *stored.authentic;
      // A kill between a commit and its record leaves the database ahead: catch up (and a
      // daemon new to a shared database starts its record here).
      out.write_record = !record.generation || *stored.authentic > *record.generation;
    }
    if (accepting != nullptr) accepting->generation = out.generation;
    return out;
  }

  /// What moves when another connection commits: SQLite's data_version; on a shared engine
  /// (other daemons write the same tables) the generation row itself, which every change
  /// advances.
  Result<std::int64_t> data_version() {
    if (engine->shared()) {
      HEARTH_ASSIGN_OR_RETURN(auto rows,
                              db->query("SELECT value FROM vault_meta WHERE key = 'generation'"));
      const auto* blob = rows.empty() ? nullptr : std::get_if<storage::Blob>(&rows.front()[0]);
      if (blob == nullptr) return std::int64_t{0};
      return static_cast<std::int64_t>(std::hash<std::string>{}(blob->bytes) >> 1) + 1;
    }
    HEARTH_ASSIGN_OR_RETURN(auto rows, db->query("PRAGMA data_version"));
    const auto* v = rows.empty() ? nullptr : std::get_if<std::int64_t>(&rows.front()[0]);
    if (v == nullptr) return internal("no data_version");
    return *v;
  }

  /// Starts a transaction that no other writer of the vault's tables can interleave with: on
  /// SQLite every write transaction is (BEGIN IMMEDIATE); on a shared engine the meta table is
  /// locked first, so that two daemons never advance the generation from the same content.
  Result<std::unique_ptr<storage::Transaction>> begin_exclusive() {
    HEARTH_ASSIGN_OR_RETURN(auto tx, db->begin());
    if (engine->shared()) {
      HEARTH_RETURN_IF_ERROR(db->execute("LOCK TABLE vault_meta IN SHARE ROW EXCLUSIVE MODE"));
    }
    return tx;
  }

  /// Checks the generation again if another connection (another process) committed since the
  /// last check: a file replaced or edited while hearth runs is refused from the next call on.
  Status recheck() {
    std::lock_guard lock(generation_mutex);
    HEARTH_ASSIGN_OR_RETURN(auto version, data_version());
    if (checked_version && *checked_version == version) return Status{};
    HEARTH_ASSIGN_OR_RETURN(auto file_lock, FileLock::take(lock_fd.get(), record_file));
    HEARTH_ASSIGN_OR_RETURN(auto tx, begin_exclusive());
    HEARTH_ASSIGN_OR_RETURN(auto now, establish(false, nullptr));
    HEARTH_ASSIGN_OR_RETURN(version, data_version());
    HEARTH_RETURN_IF_ERROR(tx->commit());
    if (now.write_record) HEARTH_RETURN_IF_ERROR(write_record(now.generation));
    checked_version = version;
    return Status{};
  }

  /// Runs `change` (a Result<bool>(): true when it changed something) in a transaction that
  /// checks the generation first and advances it with the change; the record follows once the
  /// transaction has committed. The order matters: a kill between the two leaves the database
  /// one generation ahead of the record, which is accepted; the other order would leave the
  /// record ahead, which is what a rollback looks like.
  template <class Change>
  Result<bool> change(Change apply) {
    std::lock_guard lock(generation_mutex);
    HEARTH_ASSIGN_OR_RETURN(auto file_lock, FileLock::take(lock_fd.get(), record_file));
    HEARTH_ASSIGN_OR_RETURN(auto tx, begin_exclusive());
    HEARTH_ASSIGN_OR_RETURN(auto now, establish(false, nullptr));
    HEARTH_ASSIGN_OR_RETURN(bool changed, apply());
    if (changed) {
      now.generation += 1;
      now.write_record = true;
      HEARTH_RETURN_IF_ERROR(store_generation(now.generation));
    }
    // Our own commit does not move data_version; another connection's commit after this does.
    HEARTH_ASSIGN_OR_RETURN(auto version, data_version());
    HEARTH_RETURN_IF_ERROR(tx->commit());
    if (now.write_record) {
      if (auto written = write_record(now.generation); !written.ok()) {
        return internal("the change was stored, but its generation could not be recorded in " +
                        record_file.string() + " (" + written.error().message +
                        "); the next use of the vault records it");
      }
    }
    checked_version = version;
    return changed;
  }

  void observe(const GlobalRead& read) {
    std::lock_guard lock(observer_mutex);
    if (observer) observer(read);
  }
};

Vault::Vault(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Vault::~Vault() = default;

namespace {

/// The two keys made from the master key alone: the record's MAC key and the fingerprint that
/// names the record.
bool key_only(const MasterKey& master, std::string_view info, Key& out) {
  return hkdf(master.data(), std::string(kKeyOnlySalt), std::string(info), out);
}

std::filesystem::path record_path(const std::filesystem::path& db_file, const MasterKey& key) {
  Key fingerprint{};
  key_only(key, kFingerprintInfo, fingerprint);
  auto name = db_file.filename().string() + ".generation." + hex_of(fingerprint.data(), 8);
  OPENSSL_cleanse(fingerprint.data(), fingerprint.size());
  return db_file.parent_path() / name;
}

}  // namespace

/// Opens db_file under `key`: the schema, then the salt and check value made (a new vault) or
/// the check value opened (a wrong master key is told from a tampered row), then the generation
/// checked against the record (or, `accepting`, taken as the newest).
Status Vault::Impl::open_with(const std::filesystem::path& path, MasterKey key,
                              RollbackAcceptance* accepting) {
  if (!engine) engine = storage::sqlite_engine();
  HEARTH_ASSIGN_OR_RETURN(auto opened_db, engine->open("vault", path));
  HEARTH_RETURN_IF_ERROR(opened_db->migrate("vault", migrations()));
  db = std::move(opened_db);
  file = path;
  master.emplace(std::move(key));
  if (!key_only(*master, kRecordInfo, record_key)) return internal("key derivation failed");
  record_file = record_path(file, *master);
  const auto lock_file = file.parent_path() / (file.filename().string() + ".generation.lock");
  lock_fd.reset(
      ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, S_IRUSR | S_IWUSR));
  if (!lock_fd) return internal("cannot open " + lock_file.string() + ": " + std::strerror(errno));

  std::lock_guard lock(generation_mutex);
  HEARTH_ASSIGN_OR_RETURN(auto file_lock, FileLock::take(lock_fd.get(), record_file));
  HEARTH_ASSIGN_OR_RETURN(auto tx, begin_exclusive());
  HEARTH_ASSIGN_OR_RETURN(auto rows, db->query("SELECT key, value FROM vault_meta"));
  std::map<std::string, std::string> meta;
  for (const auto& row : rows) {
    const auto* k = std::get_if<std::string>(&row[0]);
    const auto* v = std::get_if<storage::Blob>(&row[1]);
    if (k != nullptr && v != nullptr) meta[*k] = v->bytes;
  }
  const bool fresh = meta.count("salt") == 0;
  if (fresh) {
    std::string new_salt(32, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(new_salt.data()), 32) != 1) {
      return internal("no random bytes for the salt");
    }
    salt = new_salt;
    HEARTH_ASSIGN_OR_RETURN(auto check_key, key_for("hearth vault v1 check"));
    auto check = seal(check_key, kCheckText, "check");
    if (!check) return internal("sealing failed");
    HEARTH_RETURN_IF_ERROR(
        db->execute("INSERT INTO vault_meta (key, value) VALUES ('salt', ?), ('check', ?)",
                    {storage::Blob{new_salt}, storage::Blob{*check}}));
  } else {
    salt = meta["salt"];
    HEARTH_ASSIGN_OR_RETURN(auto check_key, key_for("hearth vault v1 check"));
    auto checked = open_sealed(check_key, meta["check"], "check");
    if (!checked || *checked != kCheckText) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "vault: the master key does not match this vault (" + file.string() +
                             "): was the key file replaced, or $HEARTH_VAULT_KEY changed?");
    }
  }
  HEARTH_ASSIGN_OR_RETURN(auto now, establish(fresh, accepting));
  HEARTH_ASSIGN_OR_RETURN(auto version, data_version());
  HEARTH_RETURN_IF_ERROR(tx->commit());
  if (now.write_record) HEARTH_RETURN_IF_ERROR(write_record(now.generation));
  checked_version = version;
  return Status{};
}

Status Vault::Impl::ready() {
  if (opened.load(std::memory_order_acquire)) return recheck();
  std::lock_guard lock(open_mutex);
  if (opened.load(std::memory_order_relaxed)) return recheck();
  {
    // A failed attempt leaves nothing behind for the next one.
    std::lock_guard keys_lock(keys_mutex);
    for (auto& [scope, key] : keys) OPENSSL_cleanse(key.data(), key.size());
    keys.clear();
  }
  master.reset();
  db.reset();
  lock_fd.reset();
  checked_version.reset();
  HEARTH_ASSIGN_OR_RETURN(auto key, key_source());
  HEARTH_RETURN_IF_ERROR(open_with(db_file, std::move(key)));
  opened.store(true, std::memory_order_release);
  return Status{};
}

Result<std::unique_ptr<Vault>> Vault::open(const std::filesystem::path& db_file, MasterKey key,
                                           std::shared_ptr<storage::Engine> engine) {
  auto impl = std::make_unique<Impl>();
  impl->engine = std::move(engine);
  HEARTH_RETURN_IF_ERROR(impl->open_with(db_file, std::move(key)));
  impl->opened.store(true);
  return std::unique_ptr<Vault>(new Vault(std::move(impl)));
}

std::unique_ptr<Vault> Vault::open_on_first_use(std::filesystem::path db_file, KeySource key,
                                                std::shared_ptr<storage::Engine> engine) {
  auto impl = std::make_unique<Impl>();
  impl->engine = std::move(engine);
  impl->db_file = std::move(db_file);
  impl->key_source = std::move(key);
  return std::unique_ptr<Vault>(new Vault(std::move(impl)));
}

Result<RollbackAcceptance> Vault::accept_rollback(const std::filesystem::path& db_file,
                                                  MasterKey key) {
  Impl impl;
  RollbackAcceptance out;
  HEARTH_RETURN_IF_ERROR(impl.open_with(db_file, std::move(key), &out));
  return out;
}

std::filesystem::path Vault::generation_record(const std::filesystem::path& db_file,
                                               const MasterKey& key) {
  return record_path(db_file, key);
}

Status Vault::set(std::string_view scope, std::string_view name, std::string_view value,
                  std::optional<std::int64_t> expires_at) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  HEARTH_ASSIGN_OR_RETURN(auto s, scope_of(scope));
  HEARTH_RETURN_IF_ERROR(check_name(name));
  const auto store = [&]() -> Result<bool> {
    HEARTH_ASSIGN_OR_RETURN(auto version, impl_->stored_version(s, name));
    HEARTH_RETURN_IF_ERROR(impl_->write(s, name, value, expires_at, version + 1));
    return true;
  };
  HEARTH_RETURN_IF_ERROR(impl_->change(store));
  return Status{};
}

Result<bool> Vault::set_if_version(std::string_view scope, std::string_view name,
                                   std::string_view value, std::optional<std::int64_t> expires_at,
                                   std::int64_t expected_version) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  HEARTH_ASSIGN_OR_RETURN(auto s, scope_of(scope));
  HEARTH_RETURN_IF_ERROR(check_name(name));
  return impl_->change([&]() -> Result<bool> {
    HEARTH_ASSIGN_OR_RETURN(auto version, impl_->stored_version(s, name));
    if (version != expected_version) return false;
    HEARTH_RETURN_IF_ERROR(impl_->write(s, name, value, expires_at, version + 1));
    return true;
  });
}

Result<std::optional<Secret>> Vault::get(std::string_view scope, std::string_view name) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  HEARTH_ASSIGN_OR_RETURN(auto s, scope_of(scope));
  HEARTH_RETURN_IF_ERROR(check_name(name));
  return impl_->read(s, name);
}

Result<std::optional<Secret>> Vault::get_global_for(std::string_view domain,
                                                    std::string_view name) {
  HEARTH_ASSIGN_OR_RETURN(auto d, scope_of(domain));
  HEARTH_RETURN_IF_ERROR(check_name(name));
  HEARTH_ASSIGN_OR_RETURN(bool trusted, is_trusted(d, name));
  impl_->observe({d, std::string(name), trusted});
  if (!trusted) {
    return Error::make(ErrorCode::kPermissionDenied,
                       "vault: " + d + " is not trusted with global::" + std::string(name) +
                           " (hearth vault trust " + d + " " + std::string(name) + ")",
                       json::object{{"reason", "not-trusted"},
                                    {"domain", d},
                                    {"variable", "global::" + std::string(name)}});
  }
  return impl_->read(std::string(kGlobal), name);
}

Result<std::vector<EntryInfo>> Vault::list(std::optional<std::string_view> scope) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  std::vector<storage::Row> rows;
  if (scope) {
    HEARTH_ASSIGN_OR_RETURN(auto s, scope_of(*scope));
    HEARTH_ASSIGN_OR_RETURN(rows, impl_->db->query("SELECT scope, name, updated_at, expires_at, "
                                                   "size FROM variables WHERE scope = ? ORDER "
                                                   "BY scope, name",
                                                   {s}));
  } else {
    HEARTH_ASSIGN_OR_RETURN(rows, impl_->db->query("SELECT scope, name, updated_at, expires_at, "
                                                   "size FROM variables ORDER BY scope, name"));
  }
  std::vector<EntryInfo> out;
  const auto now = now_seconds();
  for (const auto& row : rows) {
    EntryInfo e;
    e.scope = std::get<std::string>(row[0]);
    e.name = std::get<std::string>(row[1]);
    e.updated_at = std::get<std::int64_t>(row[2]);
    if (const auto* x = std::get_if<std::int64_t>(&row[3])) {
      if (*x <= now) continue;  // expired: as good as absent
      e.expires_at = *x;
    }
    e.size = static_cast<std::size_t>(std::get<std::int64_t>(row[4]));
    out.push_back(std::move(e));
  }
  return out;
}

Result<bool> Vault::remove(std::string_view scope, std::string_view name) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  HEARTH_ASSIGN_OR_RETURN(auto s, scope_of(scope));
  HEARTH_RETURN_IF_ERROR(check_name(name));
  return impl_->change([&]() -> Result<bool> {
    HEARTH_ASSIGN_OR_RETURN(auto n, impl_->db->execute("DELETE FROM variables WHERE scope = ? "
                                                       "AND name = ?",
                                                       {s, std::string(name)}));
    return n > 0;
  });
}

Status Vault::trust(std::string_view domain, const std::vector<std::string>& names) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  HEARTH_ASSIGN_OR_RETURN(auto d, scope_of(domain));
  if (d == kGlobal) {
    return Error::make(ErrorCode::kInvalidParams, "vault: trust is granted to a domain");
  }
  for (const auto& name : names) HEARTH_RETURN_IF_ERROR(check_name(name));
  const std::vector<std::string> all = {"*"};
  HEARTH_RETURN_IF_ERROR(impl_->change([&]() -> Result<bool> {
    std::int64_t added = 0;
    for (const auto& name : names.empty() ? all : names) {
      HEARTH_ASSIGN_OR_RETURN(auto n, impl_->db->execute("INSERT INTO trust_grants "
                                                         "(domain, name, granted_at) VALUES "
                                                         "(?, ?, ?) ON CONFLICT DO NOTHING",
                                                         {d, name, now_seconds()}));
      added += n;
    }
    return added > 0;
  }));
  return Status{};
}

Result<bool> Vault::revoke(std::string_view domain, const std::vector<std::string>& names) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  HEARTH_ASSIGN_OR_RETURN(auto d, scope_of(domain));
  return impl_->change([&]() -> Result<bool> {
    std::int64_t removed = 0;
    if (names.empty()) {
      HEARTH_ASSIGN_OR_RETURN(removed,
                              impl_->db->execute("DELETE FROM trust_grants WHERE domain = ?", {d}));
    } else {
      for (const auto& name : names) {
        HEARTH_ASSIGN_OR_RETURN(auto n, impl_->db->execute("DELETE FROM trust_grants WHERE "
                                                           "domain = ? AND name = ?",
                                                           {d, name}));
        removed += n;
      }
    }
    return removed > 0;
  });
}

Result<bool> Vault::is_trusted(std::string_view domain, std::string_view name) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  HEARTH_ASSIGN_OR_RETURN(auto d, scope_of(domain));
  HEARTH_ASSIGN_OR_RETURN(auto rows, impl_->db->query("SELECT 1 FROM trust_grants WHERE domain = ? "
                                                      "AND (name = ? OR name = '*')",
                                                      {d, std::string(name)}));
  return !rows.empty();
}

Result<std::vector<Grant>> Vault::grants(std::optional<std::string_view> domain) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  std::vector<storage::Row> rows;
  if (domain) {
    HEARTH_ASSIGN_OR_RETURN(auto d, scope_of(*domain));
    HEARTH_ASSIGN_OR_RETURN(rows, impl_->db->query("SELECT domain, name, granted_at FROM "
                                                   "trust_grants WHERE domain = ? ORDER BY "
                                                   "domain, name",
                                                   {d}));
  } else {
    HEARTH_ASSIGN_OR_RETURN(rows, impl_->db->query("SELECT domain, name, granted_at FROM "
                                                   "trust_grants ORDER BY domain, name"));
  }
  std::vector<Grant> out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    out.push_back({std::get<std::string>(row[0]), std::get<std::string>(row[1]),
                   std::get<std::int64_t>(row[2])});
  }
  return out;
}

void Vault::set_read_observer(ReadObserver observer) {
  std::lock_guard lock(impl_->observer_mutex);
  impl_->observer = std::move(observer);
}

}  // namespace hearth::vault
