#include "agentapp/records/records.hpp"

#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/clock.hpp"
#include "common/random.hpp"
#include "common/sha256.hpp"

namespace hearth::agentapp {

namespace fs = std::filesystem;

namespace {

const std::string kZeroHash(64, '0');

json::object entry_of(const storage::Row& row) {
  const auto parse = [](const storage::Value& v) {
    auto p = json::parse_text(std::get<std::string>(v));
    return p.ok() ? std::move(p.value()) : json::value(nullptr);
  };
  json::object e;
  e["seq"] = std::get<std::int64_t>(row[0]);
  e["at"] = std::get<std::string>(row[1]);
  e["kind"] = std::get<std::string>(row[2]);
  e["detail"] = parse(row[3]);
  e["provenance"] = parse(row[4]);
  e["prev"] = std::get<std::string>(row[5]);
  e["hash"] = std::get<std::string>(row[6]);
  return e;
}

std::string hash_of(const json::object& entry_without_hash) {
  return sha256_hex(json::canonical(entry_without_hash));
}

std::string records_sql() {
  return "CREATE TABLE hearth_evidence (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, "
         "kind TEXT NOT NULL, detail TEXT NOT NULL, provenance TEXT NOT NULL, "
         "prev TEXT NOT NULL, hash TEXT NOT NULL);"
         "CREATE TRIGGER hearth_evidence_no_update BEFORE UPDATE ON hearth_evidence "
         "BEGIN SELECT RAISE(ABORT, 'evidence is append-only'); END;"
         "CREATE TRIGGER hearth_evidence_no_delete BEFORE DELETE ON hearth_evidence "
         "BEGIN SELECT RAISE(ABORT, 'evidence is append-only'); END;"
         "CREATE TABLE hearth_artifacts (id TEXT PRIMARY KEY, type TEXT NOT NULL, "
         "media_type TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL, "
         "created_at TEXT NOT NULL, metadata TEXT NOT NULL, provenance TEXT NOT NULL);";
}

}  // namespace

json::object Provenance::to_json() const {
  return {{"appName", app},
          {"appVersion", version},
          {"packageHash", package_hash},
          {"manifestHash", manifest_hash}};
}

/// The same tables on PostgreSQL (an app placed on the server): hearth's role owns them and
/// grants the app's role nothing on them; the trigger keeps hearth's own SQL from changing an
/// entry, as SQLite's do.
std::string records_postgres_sql() {
  return "CREATE TABLE hearth_evidence (seq BIGINT PRIMARY KEY, at TEXT NOT NULL, "
         "kind TEXT NOT NULL, detail TEXT NOT NULL, provenance TEXT NOT NULL, "
         "prev TEXT NOT NULL, hash TEXT NOT NULL);"
         "CREATE FUNCTION hearth_evidence_append_only() RETURNS trigger LANGUAGE plpgsql AS "
         "$body$ BEGIN RAISE EXCEPTION 'evidence is append-only'; END $body$;"
         "CREATE TRIGGER hearth_evidence_no_change BEFORE UPDATE OR DELETE ON hearth_evidence "
         "FOR EACH ROW EXECUTE FUNCTION hearth_evidence_append_only();"
         "CREATE TABLE hearth_artifacts (id TEXT PRIMARY KEY, type TEXT NOT NULL, "
         "media_type TEXT NOT NULL, sha256 TEXT NOT NULL, size BIGINT NOT NULL, "
         "created_at TEXT NOT NULL, metadata TEXT NOT NULL, provenance TEXT NOT NULL);";
}

Status prepare_records(storage::Database& db) {
  storage::Migration first{1, records_sql()};
  first.postgres = records_postgres_sql();
  return db.migrate("hearth-app-records", {first});
}

Result<json::object> EvidenceLog::append(std::string_view kind, const json::object& detail) {
  // Two daemons appending at once (an app on a shared database) may take the same number: the
  // database refuses the second (a conflict), which reads the newest entry and tries again.
  for (int attempt = 0;; ++attempt) {
    auto appended = append_once(kind, detail);
    if (appended.ok() || appended.error().code != ErrorCode::kConflict || attempt == 4) {
      return appended;
    }
  }
}

Result<json::object> EvidenceLog::append_once(std::string_view kind, const json::object& detail) {
  HEARTH_ASSIGN_OR_RETURN(auto tx, db_.begin());
  HEARTH_ASSIGN_OR_RETURN(
      auto last, db_.query("SELECT seq, hash FROM hearth_evidence ORDER BY seq DESC LIMIT 1", {}));
  const std::int64_t seq = last.empty() ? 1 : std::get<std::int64_t>(last[0][0]) + 1;
  const std::string prev = last.empty() ? kZeroHash : std::get<std::string>(last[0][1]);
  json::object entry;
  entry["seq"] = seq;
  entry["at"] = utc_now();
  entry["kind"] = kind;
  entry["detail"] = detail;
  entry["provenance"] = provenance_.to_json();
  entry["prev"] = prev;
  const std::string hash = hash_of(entry);
  HEARTH_RETURN_IF_ERROR(
      db_.execute("INSERT INTO hearth_evidence (seq, at, kind, detail, provenance, prev, hash) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?)",
                  {seq, std::string(entry["at"].as_string()), std::string(kind),
                   json::serialize(detail), json::serialize(entry["provenance"]), prev, hash}));
  HEARTH_RETURN_IF_ERROR(tx->commit());
  entry["hash"] = hash;
  return entry;
}

Result<json::array> EvidenceLog::entries(std::int64_t after) {
  HEARTH_ASSIGN_OR_RETURN(auto rows,
                          db_.query("SELECT seq, at, kind, detail, provenance, prev, hash FROM "
                                    "hearth_evidence WHERE seq > ? ORDER BY seq",
                                    {after}));
  json::array out;
  out.reserve(rows.size());
  for (const auto& row : rows) out.emplace_back(entry_of(row));
  return out;
}

Status EvidenceLog::verify() {
  HEARTH_ASSIGN_OR_RETURN(auto all, entries(0));
  std::string prev = kZeroHash;
  std::int64_t expected_seq = 1;
  for (const auto& v : all) {
    json::object e = v.get_object();
    const std::int64_t seq = e["seq"].as_int64();
    const std::string hash(e["hash"].as_string());
    e.erase("hash");
    if (seq != expected_seq) {
      return Error::make(ErrorCode::kConflict,
                         "evidence entry " + std::to_string(expected_seq) + " is missing");
    }
    if (e["prev"].as_string() != prev) {
      return Error::make(ErrorCode::kConflict, "evidence entry " + std::to_string(seq) +
                                                   " does not follow the one before");
    }
    if (hash_of(e) != hash) {
      return Error::make(ErrorCode::kConflict, "evidence entry " + std::to_string(seq) +
                                                   " was changed after it was written");
    }
    prev = hash;
    ++expected_seq;
  }
  return {};
}

Result<json::object> ArtifactStore::create(std::string_view type, std::string_view media_type,
                                           std::string_view content, const json::object& metadata,
                                           const schema::Schema* schema) {
  if (schema != nullptr) {
    auto parsed = json::parse_text(content);
    if (!parsed.ok()) {
      return Error::make(ErrorCode::kInvalidParams, "artifact of type " + std::string(type) +
                                                        " is not JSON: " + parsed.error().message);
    }
    const auto violations = schema->validate(parsed.value());
    if (!violations.empty()) {
      json::array list;
      std::string message =
          "artifact of type " + std::string(type) + " does not follow its schema:";
      for (const auto& v : violations) {
        message +=
            " " + (v.field.empty() ? std::string("(root)") : v.field) + ": " + v.message + ";";
        list.emplace_back(
            json::object{{"field", v.field}, {"constraint", v.constraint}, {"message", v.message}});
      }
      return Error::make(ErrorCode::kInvalidParams, message, json::object{{"violations", list}});
    }
  }
  const std::string sha = sha256_hex(content);
  std::error_code ec;
  fs::create_directories(blob_dir_, ec);
  const fs::path blob = blob_dir_ / sha;
  if (!fs::exists(blob, ec)) {
    HEARTH_RETURN_IF_ERROR(write_file_atomic(blob, content, AtomicWriteOptions{.mode = 0600}));
  }
  json::object record;
  record["id"] = "art_" + random_hex(12);
  record["type"] = type;
  record["mediaType"] = media_type;
  record["sha256"] = "sha256:" + sha;
  record["size"] = static_cast<std::int64_t>(content.size());
  record["createdAt"] = utc_now();
  record["metadata"] = metadata;
  record["provenance"] = provenance_.to_json();
  HEARTH_RETURN_IF_ERROR(db_.execute(
      "INSERT INTO hearth_artifacts (id, type, media_type, sha256, size, created_at, metadata, "
      "provenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      {std::string(record["id"].as_string()), std::string(type), std::string(media_type),
       std::string(record["sha256"].as_string()), static_cast<std::int64_t>(content.size()),
       std::string(record["createdAt"].as_string()), json::serialize(metadata),
       json::serialize(record["provenance"])}));
  HEARTH_ASSIGN_OR_RETURN(
      auto logged, evidence_.append("artifact.created", json::object{{"id", record["id"]},
                                                                     {"type", type},
                                                                     {"sha256", record["sha256"]},
                                                                     {"size", record["size"]}}));
  (void)logged;
  return record;
}

Result<json::object> ArtifactStore::read(std::string_view id) {
  HEARTH_ASSIGN_OR_RETURN(auto rows,
                          db_.query("SELECT id, type, media_type, sha256, size, created_at, "
                                    "metadata, provenance FROM hearth_artifacts WHERE id = ?",
                                    {std::string(id)}));
  if (rows.empty()) {
    return Error::make(ErrorCode::kInvalidParams, "no artifact '" + std::string(id) + "'");
  }
  const auto& row = rows[0];
  json::object record;
  record["id"] = std::get<std::string>(row[0]);
  record["type"] = std::get<std::string>(row[1]);
  record["mediaType"] = std::get<std::string>(row[2]);
  record["sha256"] = std::get<std::string>(row[3]);
  record["size"] = std::get<std::int64_t>(row[4]);
  record["createdAt"] = std::get<std::string>(row[5]);
  auto metadata = json::parse_text(std::get<std::string>(row[6]));
  record["metadata"] = metadata.ok() ? metadata.value() : json::value(nullptr);
  auto provenance = json::parse_text(std::get<std::string>(row[7]));
  record["provenance"] = provenance.ok() ? provenance.value() : json::value(nullptr);
  const std::string sha = std::get<std::string>(row[3]).substr(7);
  std::ifstream in(blob_dir_ / sha, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string content = bytes.str();
  if (!in || sha256_hex(content) != sha) {
    return Error::make(ErrorCode::kConflict,
                       "artifact " + std::string(id) + ": its content is missing or changed");
  }
  record["content"] = content;
  return record;
}

Result<json::array> ArtifactStore::list() {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows, db_.query("SELECT id, type, sha256, size, created_at FROM hearth_artifacts "
                           "ORDER BY created_at, id",
                           {}));
  json::array out;
  for (const auto& row : rows) {
    out.emplace_back(json::object{{"id", std::get<std::string>(row[0])},
                                  {"type", std::get<std::string>(row[1])},
                                  {"sha256", std::get<std::string>(row[2])},
                                  {"size", std::get<std::int64_t>(row[3])},
                                  {"createdAt", std::get<std::string>(row[4])}});
  }
  return out;
}

}  // namespace hearth::agentapp
