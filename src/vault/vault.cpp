#include "vault/vault.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>

#include "common/ascii.hpp"
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

}  // namespace

struct Vault::Impl {
  std::unique_ptr<storage::Database> db;
  std::optional<MasterKey> master;
  std::string salt;
  // Opening at first use: what to open, and whether it is done (db is set once, under the
  // mutex, before `opened` says so).
  std::filesystem::path db_file;
  KeySource key_source;
  std::mutex open_mutex;
  std::atomic<bool> opened{false};
  std::mutex keys_mutex;
  std::map<std::string, Key> keys;  ///< derived per scope, wiped on close
  std::mutex observer_mutex;
  ReadObserver observer;

  Impl() = default;
  ~Impl() {
    for (auto& [scope, key] : keys) OPENSSL_cleanse(key.data(), key.size());
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

  Status open_with(const std::filesystem::path& file, MasterKey key);
  /// Opens the vault if it is not open yet (a vault made by open_on_first_use).
  Status ready();

  void observe(const GlobalRead& read) {
    std::lock_guard lock(observer_mutex);
    if (observer) observer(read);
  }
};

Vault::Vault(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Vault::~Vault() = default;

/// Opens db_file under `key`: the schema, then the salt and check value made (a new vault) or
/// the check value opened (a wrong master key is told from a tampered row).
Status Vault::Impl::open_with(const std::filesystem::path& file, MasterKey key) {
  HEARTH_ASSIGN_OR_RETURN(auto opened_db, storage::open_sqlite(file));
  HEARTH_RETURN_IF_ERROR(opened_db->migrate("vault", migrations()));
  HEARTH_ASSIGN_OR_RETURN(auto tx, opened_db->begin());
  HEARTH_ASSIGN_OR_RETURN(auto rows, opened_db->query("SELECT key, value FROM vault_meta"));
  std::map<std::string, std::string> meta;
  for (const auto& row : rows) {
    const auto* k = std::get_if<std::string>(&row[0]);
    const auto* v = std::get_if<storage::Blob>(&row[1]);
    if (k != nullptr && v != nullptr) meta[*k] = v->bytes;
  }
  master.emplace(std::move(key));
  if (meta.count("salt") == 0) {
    std::string new_salt(32, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(new_salt.data()), 32) != 1) {
      return internal("no random bytes for the salt");
    }
    salt = new_salt;
    HEARTH_ASSIGN_OR_RETURN(auto check_key, key_for("hearth vault v1 check"));
    auto check = seal(check_key, kCheckText, "check");
    if (!check) return internal("sealing failed");
    HEARTH_RETURN_IF_ERROR(
        opened_db->execute("INSERT INTO vault_meta (key, value) VALUES ('salt', ?), ('check', ?)",
                           {storage::Blob{new_salt}, storage::Blob{*check}}));
    HEARTH_RETURN_IF_ERROR(tx->commit());
  } else {
    tx.reset();
    salt = meta["salt"];
    HEARTH_ASSIGN_OR_RETURN(auto check_key, key_for("hearth vault v1 check"));
    auto checked = open_sealed(check_key, meta["check"], "check");
    if (!checked || *checked != kCheckText) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "vault: the master key does not match this vault (" + file.string() +
                             "): was the key file replaced, or $HEARTH_VAULT_KEY changed?");
    }
  }
  db = std::move(opened_db);
  return Status{};
}

Status Vault::Impl::ready() {
  if (opened.load(std::memory_order_acquire)) return Status{};
  std::lock_guard lock(open_mutex);
  if (opened.load(std::memory_order_relaxed)) return Status{};
  {
    // A failed attempt leaves nothing behind for the next one.
    std::lock_guard keys_lock(keys_mutex);
    for (auto& [scope, key] : keys) OPENSSL_cleanse(key.data(), key.size());
    keys.clear();
  }
  master.reset();
  HEARTH_ASSIGN_OR_RETURN(auto key, key_source());
  HEARTH_RETURN_IF_ERROR(open_with(db_file, std::move(key)));
  opened.store(true, std::memory_order_release);
  return Status{};
}

Result<std::unique_ptr<Vault>> Vault::open(const std::filesystem::path& db_file, MasterKey key) {
  auto impl = std::make_unique<Impl>();
  HEARTH_RETURN_IF_ERROR(impl->open_with(db_file, std::move(key)));
  impl->opened.store(true);
  return std::unique_ptr<Vault>(new Vault(std::move(impl)));
}

std::unique_ptr<Vault> Vault::open_on_first_use(std::filesystem::path db_file, KeySource key) {
  auto impl = std::make_unique<Impl>();
  impl->db_file = std::move(db_file);
  impl->key_source = std::move(key);
  return std::unique_ptr<Vault>(new Vault(std::move(impl)));
}

Status Vault::set(std::string_view scope, std::string_view name, std::string_view value,
                  std::optional<std::int64_t> expires_at) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  HEARTH_ASSIGN_OR_RETURN(auto s, scope_of(scope));
  HEARTH_RETURN_IF_ERROR(check_name(name));
  HEARTH_ASSIGN_OR_RETURN(auto tx, impl_->db->begin());
  HEARTH_ASSIGN_OR_RETURN(auto version, impl_->stored_version(s, name));
  HEARTH_RETURN_IF_ERROR(impl_->write(s, name, value, expires_at, version + 1));
  return tx->commit();
}

Result<bool> Vault::set_if_version(std::string_view scope, std::string_view name,
                                   std::string_view value, std::optional<std::int64_t> expires_at,
                                   std::int64_t expected_version) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  HEARTH_ASSIGN_OR_RETURN(auto s, scope_of(scope));
  HEARTH_RETURN_IF_ERROR(check_name(name));
  HEARTH_ASSIGN_OR_RETURN(auto tx, impl_->db->begin());
  HEARTH_ASSIGN_OR_RETURN(auto version, impl_->stored_version(s, name));
  if (version != expected_version) return false;
  HEARTH_RETURN_IF_ERROR(impl_->write(s, name, value, expires_at, version + 1));
  HEARTH_RETURN_IF_ERROR(tx->commit());
  return true;
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
                       json::object{{"domain", d}, {"variable", "global::" + std::string(name)}});
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
  HEARTH_ASSIGN_OR_RETURN(auto n, impl_->db->execute("DELETE FROM variables WHERE scope = ? AND "
                                                     "name = ?",
                                                     {s, std::string(name)}));
  return n > 0;
}

Status Vault::trust(std::string_view domain, const std::vector<std::string>& names) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  HEARTH_ASSIGN_OR_RETURN(auto d, scope_of(domain));
  if (d == kGlobal) {
    return Error::make(ErrorCode::kInvalidParams, "vault: trust is granted to a domain");
  }
  for (const auto& name : names) HEARTH_RETURN_IF_ERROR(check_name(name));
  HEARTH_ASSIGN_OR_RETURN(auto tx, impl_->db->begin());
  const std::vector<std::string> all = {"*"};
  for (const auto& name : names.empty() ? all : names) {
    HEARTH_RETURN_IF_ERROR(impl_->db->execute(
        "INSERT OR IGNORE INTO trust_grants (domain, name, granted_at) VALUES (?, ?, ?)",
        {d, name, now_seconds()}));
  }
  return tx->commit();
}

Result<bool> Vault::revoke(std::string_view domain, const std::vector<std::string>& names) {
  HEARTH_RETURN_IF_ERROR(impl_->ready());
  HEARTH_ASSIGN_OR_RETURN(auto d, scope_of(domain));
  HEARTH_ASSIGN_OR_RETURN(auto tx, impl_->db->begin());
  std::int64_t removed = 0;
  if (names.empty()) {
    HEARTH_ASSIGN_OR_RETURN(removed,
                            impl_->db->execute("DELETE FROM trust_grants WHERE domain = ?", {d}));
  } else {
    for (const auto& name : names) {
      HEARTH_ASSIGN_OR_RETURN(auto n, impl_->db->execute("DELETE FROM trust_grants WHERE domain "
                                                         "= ? AND name = ?",
                                                         {d, name}));
      removed += n;
    }
  }
  HEARTH_RETURN_IF_ERROR(tx->commit());
  return removed > 0;
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
