// TEMPORARY: the apps' storage engine until the storage component (subsystems/storage.hpp,
// Storage::engine()) provides the daemon's one engine; replaced when it is merged.
#include "subsystems/apps.hpp"

namespace hearth::subsystems {

std::shared_ptr<storage::Engine> engine_of(daemon::Context& /*context*/) {
  return storage::sqlite_engine();
}

}  // namespace hearth::subsystems
