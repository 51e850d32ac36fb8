#pragma once
// Test helper: a small but complete package (manifest, UI entry, backend, storage) and a
// publisher key trusted by a store.

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "agentapp/package/test_package.hpp"

namespace hearth::agentapp::testing {

inline std::string notes_app_md(const std::string& publisher = "example-org") {
  return "---\n"
         "name: notes\n"
         "description: Notes with a summary.\n"
         "version: 1.2.0\n"
         "status: ready\n"
         "appType: agent-app\n"
         "manifestVersion: 0.10.0\n"
         "publisher:\n"
         "  publisherId: " +
         publisher +
         "\n"
         "  name: Example\n"
         "requires:\n"
         "  capabilities:\n"
         "    lime.storage: ^1.0\n"
         "    lime.ui: ^1.0\n"
         "entries:\n"
         "  - key: notes\n"
         "    kind: page\n"
         "    title: Notes\n"
         "    route: /notes\n"
         "permissions:\n"
         "  - key: sync\n"
         "    scope: network\n"
         "    access: read\n"
         "    domains: [api.example.org]\n"
         "storage:\n"
         "  namespace: notes\n"
         "  placement: local-sqlite\n"
         "  isolation: per-app-database\n"
         "  migrations: storage/migrations\n"
         "services:\n"
         "  - key: backend\n"
         "    kind: app-backend\n"
         "    executionPlane: client-local\n"
         "    protocol: stdio-jsonrpc\n"
         "    command: services/backend.py\n"
         "    network: deny-by-default\n"
         "secrets:\n"
         "  - key: token\n"
         "    required: true\n"
         "---\n# Notes\n";
}

inline void write_notes_app(const PackageDir& dir) {
  dir.write("APP.md", notes_app_md());
  dir.write("dist/ui/index.html", "<h1>Notes</h1>\n");
  dir.write("services/backend.py", "print('ready')\n");
  dir.write("storage/migrations/001_init.sql", "CREATE TABLE notes (id TEXT);\n");
}

/// Writes `bytes` to the file `rel` of an installed package (read-only: made writable first), as
/// someone changing it behind hearth's back would.
inline void change_installed(const std::filesystem::path& package, const std::string& rel,
                             std::string_view bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::permissions(package, fs::perms::owner_all, fs::perm_options::add, ec);
  for (auto it = fs::recursive_directory_iterator(package, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_symlink()) {
      fs::permissions(it->path(), fs::perms::owner_write, fs::perm_options::add);
    }
  }
  fs::create_directories((package / rel).parent_path());
  std::ofstream(package / rel, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace hearth::agentapp::testing
