#pragma once
/// Workspaces: the workspaces a daemon (or a CLI command) serves, by id, with the store they
/// share and a JS worker pool each (jailed with the workspace's grants: no files and no network
/// unless granted, its memory limit).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/blocking.hpp"
#include "jail/jail.hpp"
#include "workspace/workspace.hpp"

namespace hearth::workspace {

struct ManagerOptions {
  std::filesystem::path database;  ///< the store's file (STATE_DIR/workspaces.db)
  /// Where the store is: null, the SQLite file `database`. A shared engine (PostgreSQL) also
  /// carries each committed change to the other daemons, whose workspaces of the same name read
  /// it and tell their listeners (workspace/changed).
  std::shared_ptr<storage::Engine> engine;
  std::filesystem::path worker_program;    ///< empty: hearth-js-worker beside this executable
  std::shared_ptr<const jail::Jail> jail;  ///< null: unconfined (tests)
  std::size_t workers = 1;                 ///< JS workers per workspace
};

class Manager {
 public:
  /// Opens the store. Errors: the database cannot be opened or migrated.
  static Result<std::unique_ptr<Manager>> create(const boost::asio::any_io_executor& executor,
                                                 ManagerOptions options, BlockingExecutor& blocking,
                                                 Services* services);
  ~Manager();

  /// Loads and opens the workspace in `dir` (the one already open when it is). Its problems come
  /// back as one error listing them with their paths.
  boost::asio::awaitable<Result<std::shared_ptr<Workspace>>> open(std::filesystem::path dir);

  /// The workspace of that id; -32601 naming the ones there are when there is none.
  Result<std::shared_ptr<Workspace>> find(std::string_view id) const;
  std::vector<std::shared_ptr<Workspace>> list() const;

  /// Closes every workspace and stops their workers.
  void shutdown();

 private:
  Manager(const boost::asio::any_io_executor& executor, ManagerOptions options,
          std::unique_ptr<Store> store, BlockingExecutor& blocking, Services* services);
  /// Tells the other daemons of a change committed here (a shared engine only).
  void publish(const ChangeEvent& event);
  /// A change another daemon committed, or (empty name) every workspace after a resync.
  void refresh(const std::string& name, std::int64_t version, const std::string& actor,
               const std::string& kind);

  /// What the bus's handlers reach: cleared (under its mutex) when the manager goes.
  struct Remote {
    std::mutex mu;
    Manager* manager = nullptr;
  };

  boost::asio::any_io_executor executor_;
  ManagerOptions options_;
  std::unique_ptr<Store> store_;
  BlockingExecutor& blocking_;
  Services* services_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Workspace>, std::less<>> workspaces_;
  std::vector<std::shared_ptr<jsworker::Pool>> pools_;
  std::shared_ptr<Remote> remote_;
  std::uint64_t notices_ = 0;
  std::uint64_t resyncs_ = 0;
};

}  // namespace hearth::workspace
