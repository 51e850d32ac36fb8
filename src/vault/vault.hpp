#pragma once
/// The variable vault (a2s-protocol.md, "Variable Management"; docs/a2s.md, "Vault"): service
/// variables (`DOMAIN::NAME`) and global variables (`global::NAME`) kept in SQLite, each value
/// sealed with AES-256-GCM under a key derived for its scope with HKDF-SHA256 from the master
/// key, the scope and the name bound as associated data. Trust grants decide which domains may
/// read which global variables. Thread-safe; every call blocks on SQLite (call it off the I/O
/// threads).
///
/// Rollback: the database holds a generation, advanced by every write, and an HMAC (a key derived
/// from the master key) over it and the whole content; a generation record outside the database
/// (`<db file>.generation.<key fingerprint>`, beside it, MAC'd with the master key too) keeps the
/// last generation this key wrote. A database older than the record, with content that does not
/// match its generation, or without a record when it has a generation, is refused
/// (kPermissionDenied) until the newest copy is back or `accept_rollback` accepts it.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "storage/engine.hpp"
#include "vault/master_key.hpp"

namespace hearth::vault {

/// The scope of global variables. A domain is never "global" (it has no dot and no port, and the
/// vault refuses it as a domain).
inline constexpr std::string_view kGlobal = "global";

/// A value read back. `expires_at` in Unix seconds, nullopt when it never expires.
struct Secret {
  std::string value;
  std::optional<std::int64_t> expires_at;
  std::int64_t version = 0;  ///< increases with every write of this variable
};

/// What `list` shows: never the value.
struct EntryInfo {
  std::string scope;  ///< a domain or "global"
  std::string name;
  std::int64_t updated_at = 0;
  std::optional<std::int64_t> expires_at;
  std::size_t size = 0;  ///< bytes of the value
};

struct Grant {
  std::string domain;
  std::string name;  ///< a global variable's name, or "*" for all of them
  std::int64_t granted_at = 0;
};

/// Called once for every read of a global variable on a domain's behalf (granted or refused),
/// so the daemon can write it to its audit log.
struct GlobalRead {
  std::string domain;
  std::string name;
  bool granted = false;
};

/// What Vault::accept_rollback found and did.
struct RollbackAcceptance {
  /// The refusal that was accepted (the message a normal open gives); empty when the vault was
  /// current and nothing needed accepting.
  std::string accepted;
  std::optional<std::int64_t> file_generation;      ///< the database's own, when authentic
  std::optional<std::int64_t> recorded_generation;  ///< the record's, when it had a valid one
  std::int64_t generation = 0;                      ///< the vault's generation now
};

class Vault {
 public:
  /// Opens (creating, mode 0600) `db_file`, applying the vault's schema migrations. With a
  /// PostgreSQL `engine` the vault's tables are the `hearth_vault` schema several daemons share
  /// (each with the same master key: the values are sealed before they reach the database);
  /// `db_file` still names this daemon's generation record and lock beside it. Null: SQLite.
  static Result<std::unique_ptr<Vault>> open(const std::filesystem::path& db_file, MasterKey key,
                                             std::shared_ptr<storage::Engine> engine = nullptr);

  /// Where the master key comes from, asked once the vault is first used.
  using KeySource = std::function<Result<MasterKey>()>;
  /// A vault that reads its key and opens `db_file` at its first use (the daemon: no key file,
  /// no database and no cryptography touched until a variable is needed). Every call reports
  /// a failure to open as its own error, and the next call tries again.
  static std::unique_ptr<Vault> open_on_first_use(
      std::filesystem::path db_file, KeySource key,
      std::shared_ptr<storage::Engine> engine = nullptr);
  /// The operator's way out of a rollback refusal (`hearth vault accept-rollback`): opens
  /// `db_file` under `key` (a key that does not match is still refused) as it is, and makes its
  /// content the newest generation, above both its own and the record's, so that every older
  /// copy is refused from then on. Values keep their own authentication: a value moved to
  /// another row still fails to open.
  static Result<RollbackAcceptance> accept_rollback(const std::filesystem::path& db_file,
                                                    MasterKey key);
  /// The generation record's file for `db_file` under `key` (tests, the CLI's messages).
  static std::filesystem::path generation_record(const std::filesystem::path& db_file,
                                                 const MasterKey& key);
  ~Vault();
  Vault(const Vault&) = delete;
  Vault& operator=(const Vault&) = delete;

  /// Stores a value (durable when this returns: WAL, synchronous=FULL). `scope` is a domain or
  /// kGlobal. Names are [A-Za-z_][A-Za-z0-9_]{0,127}.
  Status set(std::string_view scope, std::string_view name, std::string_view value,
             std::optional<std::int64_t> expires_at = std::nullopt);

  /// Stores a value only if the stored version is still `expected_version` (0: absent), for a
  /// rotated refresh token that must not overwrite a newer one. Returns false when it changed.
  Result<bool> set_if_version(std::string_view scope, std::string_view name, std::string_view value,
                              std::optional<std::int64_t> expires_at,
                              std::int64_t expected_version);

  /// Reads a value; nullopt when absent or expired. A row whose ciphertext, scope or name was
  /// changed (or moved to another row) fails with kPermissionDenied "vault: ... was tampered
  /// with", never wrong data.
  Result<std::optional<Secret>> get(std::string_view scope, std::string_view name);

  /// Reads a global variable for `domain`: refused without a trust grant (kPermissionDenied,
  /// data {reason: "not-trusted", domain, variable}; programs tell it by `reason`). Every call,
  /// granted or not, is passed to the read observer.
  Result<std::optional<Secret>> get_global_for(std::string_view domain, std::string_view name);

  Result<std::vector<EntryInfo>> list(std::optional<std::string_view> scope = std::nullopt);
  /// True when something was deleted.
  Result<bool> remove(std::string_view scope, std::string_view name);

  /// Grants `domain` read access to the named global variables (empty: all of them).
  Status trust(std::string_view domain, const std::vector<std::string>& names);
  /// Revokes grants (empty names: every grant of the domain). True when something was revoked.
  Result<bool> revoke(std::string_view domain, const std::vector<std::string>& names);
  Result<bool> is_trusted(std::string_view domain, std::string_view name);
  Result<std::vector<Grant>> grants(std::optional<std::string_view> domain = std::nullopt);

  using ReadObserver = std::function<void(const GlobalRead&)>;
  void set_read_observer(ReadObserver observer);

 private:
  struct Impl;
  explicit Vault(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::vault
