#include "storage/group_commit.hpp"

#include <utility>

namespace hearth::storage {

Status GroupCommit::run(const std::function<Status()>& write) {
  Waiting mine;
  mine.write = &write;
  std::unique_lock lock(mutex_);
  waiting_.push_back(&mine);
  while (!mine.done) {
    if (running_) {
      done_.wait(lock);
      continue;
    }
    // No transaction in progress: this thread runs every write waiting, its own among them.
    running_ = true;
    const std::vector<Waiting*> group = std::exchange(waiting_, {});
    lock.unlock();
    // Whatever happens in the group (even an exception), its writers are released.
    struct Release {
      GroupCommit& self;
      const std::vector<Waiting*>& group;
      std::unique_lock<std::mutex>& lock;
      bool finished = false;
      ~Release() {
        if (!lock.owns_lock()) lock.lock();
        for (Waiting* w : group) {
          if (!finished) {
            w->status = Error::make(ErrorCode::kInternalError, "storage: the group write failed");
          }
          w->done = true;
        }
        self.running_ = false;
        self.done_.notify_all();
      }
    } release{*this, group, lock};
    run_group(group);
    release.finished = true;
    lock.lock();
    ++transactions_;
    writes_ += group.size();
  }
  return std::move(mine.status);
}

void GroupCommit::run_group(const std::vector<Waiting*>& group) {
  auto tx = db_.begin();
  if (!tx.ok()) {
    for (Waiting* w : group) w->status = tx.error();
    return;
  }
  if (group.size() == 1) {
    Waiting& w = *group.front();
    w.status = (*w.write)();
    if (w.status.ok()) w.status = tx.value()->commit();
    return;
  }
  // When the transaction itself is lost (SQLite rolls a whole transaction back on some errors, a
  // full disk among them), none of the group's writes is kept: each gets the error, unless it
  // failed on its own.
  const auto lost = [&group](const Error& why) {
    for (Waiting* w : group) {
      if (w->status.ok()) w->status = why;
    }
  };
  bool any = false;
  for (Waiting* w : group) {
    if (auto saved = db_.execute("SAVEPOINT hearth_group_write"); !saved.ok()) {
      lost(saved.error());
      return;
    }
    w->status = (*w->write)();
    if (!w->status.ok()) {
      if (auto back = db_.execute("ROLLBACK TO hearth_group_write"); !back.ok()) {
        lost(back.error());
        return;
      }
    } else {
      any = true;
    }
    if (auto released = db_.execute("RELEASE hearth_group_write"); !released.ok()) {
      lost(released.error());
      return;
    }
  }
  if (!any) return;  // nothing to keep: the transaction rolls back
  const Status committed = tx.value()->commit();
  if (committed.ok()) return;
  for (Waiting* w : group) {
    if (w->status.ok()) w->status = committed;
  }
}

std::uint64_t GroupCommit::transactions() const {
  const std::lock_guard lock(mutex_);
  return transactions_;
}

std::uint64_t GroupCommit::writes() const {
  const std::lock_guard lock(mutex_);
  return writes_;
}

std::size_t GroupCommit::waiting() const {
  const std::lock_guard lock(mutex_);
  return waiting_.size();
}

}  // namespace hearth::storage
