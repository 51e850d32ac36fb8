#pragma once
/// SharedHelpers: the long-lived helpers a handler kind keeps for services (a JS worker pool, an
/// MCP server), shared by the endpoints of one service that have the same permissions and made
/// on first use. Each handler holds its Slot, so a helper lives as long as a handler using it:
/// when a service is replaced or removed, release() stops sharing its slots with services loaded
/// later, calls still running on the old handlers keep their helper, and the helper stops when
/// the last of them is gone. shutdown() stops every helper still alive.

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hearth::handlers {

/// `Helper` has stop(); `Config` is what it is made from.
template <class Helper, class Config>
class SharedHelpers {
 public:
  class Slot {
   public:
    Slot(SharedHelpers* owner, Config config) : owner_(owner), config_(std::move(config)) {}
    ~Slot() {
      if (helper_) helper_->stop();
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

    /// The helper, made by `make(config)` on first use; null once the kind has shut down or
    /// when `make` returns null.
    std::shared_ptr<Helper> get(const std::function<std::shared_ptr<Helper>(const Config&)>& make) {
      std::lock_guard lock(owner_->mutex_);
      if (!helper_ && !owner_->shut_down_) helper_ = make(config_);
      return helper_;
    }
    /// The helper if it has been made.
    std::shared_ptr<Helper> made() const {
      std::lock_guard lock(owner_->mutex_);
      return helper_;
    }

   private:
    friend class SharedHelpers;
    SharedHelpers* owner_;
    Config config_;
    std::shared_ptr<Helper> helper_;
  };

  /// The slot of `key` for the service in `service_dir`: a new one made with `config`, or the
  /// current one with `merge(its config, its helper)` applied (another endpoint joining it).
  std::shared_ptr<Slot> slot(const std::filesystem::path& service_dir, const std::string& key,
                             Config config,
                             const std::function<void(Config&, Helper*)>& merge = {}) {
    std::lock_guard lock(mutex_);
    const std::string full = service_dir.string() + '\n' + key;
    if (auto it = current_.find(full); it != current_.end()) {
      if (auto existing = it->second.lock()) {
        if (merge) merge(existing->config_, existing->helper_.get());
        return existing;
      }
    }
    auto made = std::make_shared<Slot>(this, std::move(config));
    current_[full] = made;
    std::erase_if(all_, [](const auto& w) { return w.expired(); });
    all_.push_back(made);
    return made;
  }

  /// Slots made for `service_dir` from now on are new ones.
  void release(const std::filesystem::path& service_dir) {
    std::lock_guard lock(mutex_);
    const std::string prefix = service_dir.string() + '\n';
    std::erase_if(current_, [&](const auto& entry) { return entry.first.starts_with(prefix); });
  }

  /// Stops every helper alive and makes no more.
  void shutdown() {
    std::vector<std::shared_ptr<Helper>> helpers;
    {
      std::lock_guard lock(mutex_);
      shut_down_ = true;
      for (auto& weak : all_) {
        if (auto s = weak.lock(); s && s->helper_) helpers.push_back(s->helper_);
      }
    }
    for (auto& h : helpers) h->stop();
  }

  /// Calls `f` on every helper alive (under the lock: keep it short).
  void for_each(const std::function<void(Helper&)>& f) const {
    std::lock_guard lock(mutex_);
    for (const auto& weak : all_) {
      if (auto s = weak.lock(); s && s->helper_) f(*s->helper_);
    }
  }

 private:
  mutable std::mutex mutex_;
  bool shut_down_ = false;
  std::map<std::string, std::weak_ptr<Slot>> current_;  ///< by service folder + key
  std::vector<std::weak_ptr<Slot>> all_;
};

}  // namespace hearth::handlers
