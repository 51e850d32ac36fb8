#include "a2s/exec/stored.hpp"

#include <chrono>

namespace hearth::a2s {

namespace {

const std::vector<storage::Migration>& stored_migrations() {
  static const std::vector<storage::Migration> kMigrations = {
      {1,
       "CREATE TABLE registry_definitions (service TEXT PRIMARY KEY, document TEXT NOT NULL, "
       "updated_at INTEGER NOT NULL)"},
  };
  return kMigrations;
}

}  // namespace

Result<std::unique_ptr<DefinitionStore>> DefinitionStore::open(storage::Engine& engine,
                                                               const std::filesystem::path& file) {
  HEARTH_ASSIGN_OR_RETURN(auto db, engine.open("registry", file));
  HEARTH_RETURN_IF_ERROR(db->migrate("registry", stored_migrations()));
  return std::unique_ptr<DefinitionStore>(new DefinitionStore(std::move(db)));
}

Result<std::vector<StoredDefinition>> DefinitionStore::all() {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows,
      db_->query(
          "SELECT service, document, updated_at FROM registry_definitions ORDER BY service"));
  std::vector<StoredDefinition> out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    StoredDefinition d;
    if (const auto* s = std::get_if<std::string>(&row[0])) d.service = *s;
    if (const auto* s = std::get_if<std::string>(&row[1])) d.document = *s;
    if (const auto* n = std::get_if<std::int64_t>(&row[2])) d.updated_at = *n;
    out.push_back(std::move(d));
  }
  return out;
}

Status DefinitionStore::put(const std::string& service, const std::string& document) {
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  HEARTH_RETURN_IF_ERROR(db_->execute(
      "INSERT INTO registry_definitions (service, document, updated_at) VALUES (?, ?, ?) "
      "ON CONFLICT (service) DO UPDATE SET document = excluded.document, updated_at = "
      "excluded.updated_at",
      {service, document, static_cast<std::int64_t>(now)}));
  return {};
}

Result<bool> DefinitionStore::remove(const std::string& service) {
  HEARTH_ASSIGN_OR_RETURN(
      auto n, db_->execute("DELETE FROM registry_definitions WHERE service = ?", {service}));
  return n > 0;
}

}  // namespace hearth::a2s
