#pragma once
/// What an Agent App leaves behind, with the package it came from (docs/agent-apps.md,
/// "Artifacts and evidence"): an append-only, hash-chained evidence log, and artifacts -
/// content-addressed blobs with metadata. Both live in the app's own database (AppData), in
/// tables the app's SQL cannot reach, and each entry carries the provenance: app name and
/// version, package hash, manifest hash.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "json/json.hpp"
#include "schema/schema.hpp"
#include "storage/storage.hpp"

namespace hearth::agentapp {

struct Provenance {
  std::string app;
  std::string version;
  std::string package_hash;
  std::string manifest_hash;
  json::object to_json() const;
};

/// Makes the tables of both in an app's database (AppData::open calls it).
Status prepare_records(storage::Database& db);

class EvidenceLog {
 public:
  EvidenceLog(storage::Database& db, Provenance provenance)
      : db_(db), provenance_(std::move(provenance)) {}

  /// Appends an entry {seq, at, kind, detail, provenance, prev, hash}: `prev` is the hash of
  /// the entry before (64 zeros for the first), `hash` the SHA-256 of the canonical JSON of the
  /// entry without `hash`. Returns it.
  Result<json::object> append(std::string_view kind, const json::object& detail);
  /// The entries after sequence number `after`, oldest first.
  Result<json::array> entries(std::int64_t after = 0);
  /// Recomputes every hash and link: ok, or the first entry that does not match.
  Status verify();

 private:
  Result<json::object> append_once(std::string_view kind, const json::object& detail);
  storage::Database& db_;
  Provenance provenance_;
};

class ArtifactStore {
 public:
  /// Blobs are files named by their SHA-256 in `blob_dir`; each creation is also evidence.
  ArtifactStore(storage::Database& db, std::filesystem::path blob_dir, Provenance provenance,
                EvidenceLog& evidence)
      : db_(db),
        blob_dir_(std::move(blob_dir)),
        provenance_(std::move(provenance)),
        evidence_(evidence) {}

  /// Stores an artifact of `type`. When `schema` is given the content must be JSON that it
  /// accepts; every violation is listed in the error. Returns the artifact's record.
  Result<json::object> create(std::string_view type, std::string_view media_type,
                              std::string_view content, const json::object& metadata,
                              const schema::Schema* schema);
  /// The record and the content, its hash checked again.
  Result<json::object> read(std::string_view id);
  Result<json::array> list();

 private:
  storage::Database& db_;
  std::filesystem::path blob_dir_;
  Provenance provenance_;
  EvidenceLog& evidence_;
};

}  // namespace hearth::agentapp
