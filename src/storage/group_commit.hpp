#pragma once
/// GroupCommit: writes given from several threads at once share one transaction and so one
/// flush to disk. With `synchronous=FULL` every commit waits for the disk; a database that
/// serialises its writers anyway (one SQLite connection) then commits at the disk's flush rate,
/// whatever the number of writers. Here the first writer runs alone; the writers that arrive
/// while it runs wait, and the next of them runs all of them in one transaction, each inside
/// its own savepoint (a write that fails is rolled back alone and gets its own error), and
/// commits once. Every caller returns when its write is on disk, as before.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "common/result.hpp"
#include "storage/storage.hpp"

namespace hearth::storage {

class GroupCommit {
 public:
  explicit GroupCommit(Database& db) : db_(db) {}
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  /// Runs `write` (statements on `db`, no transaction of its own) in a transaction, with other
  /// threads' writes when they come at once; returns when the transaction is committed: the
  /// write's own error, or the commit's.
  Status run(const std::function<Status()>& write);

  /// How many transactions ran and how many writes they held (tests, benchmarks).
  std::uint64_t transactions() const;
  std::uint64_t writes() const;
  /// Writes waiting for the transaction in progress to end (tests).
  std::size_t waiting() const;

 private:
  struct Waiting {
    const std::function<Status()>* write = nullptr;
    Status status;
    bool done = false;
  };
  void run_group(const std::vector<Waiting*>& group);

  Database& db_;
  mutable std::mutex mutex_;
  std::condition_variable done_;
  std::vector<Waiting*> waiting_;
  bool running_ = false;
  std::uint64_t transactions_ = 0;
  std::uint64_t writes_ = 0;
};

}  // namespace hearth::storage
