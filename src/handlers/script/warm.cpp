#include "handlers/script/warm.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <utility>
#include <vector>

namespace hearth::handlers::script {

namespace asio = boost::asio;

WarmJails::WarmJails(const asio::any_io_executor& executor, Make make, std::string label,
                     std::chrono::milliseconds idle)
    : strand_(asio::make_strand(executor)),
      idle_(strand_),
      make_(std::move(make)),
      label_(std::move(label)),
      idle_time_(idle) {}

WarmJails::~WarmJails() {
  stop();
}

std::optional<WarmJail> WarmJails::take() {
  std::optional<WarmJail> taken;
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return std::nullopt;
    if (ready_.empty()) {
      target_ = std::min(target_ + 1, kMaxWarm);
    } else {
      taken = std::move(ready_.front());
      ready_.pop_front();
    }
  }
  asio::post(strand_, [weak = weak_from_this()] {
    if (auto self = weak.lock()) self->refill();
  });
  return taken;
}

void WarmJails::refill() {
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopped_ || ready_.size() >= target_) break;
    }
    auto made = make_();
    if (!made.ok()) {
      // The next call goes the cold way and reports the reason itself.
      spdlog::debug("{}: no warm jail: {}", label_, made.error().message);
      break;
    }
    WarmJail jail = std::move(made).value();
    jail.made = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_);
    if (stopped_) {
      lock.unlock();
      drop(std::move(jail), strand_);
      break;
    }
    ready_.push_back(std::move(jail));
  }
  arm();
}

void WarmJails::arm() {
  {
    std::lock_guard lock(mutex_);
    if (armed_ || stopped_ || ready_.empty()) return;
    armed_ = true;
  }
  idle_.expires_after(idle_time_ / 2);
  idle_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self) return;
    std::vector<WarmJail> stale;
    {
      std::lock_guard lock(self->mutex_);
      self->armed_ = false;
      if (ec || self->stopped_) return;
      const auto now = std::chrono::steady_clock::now();
      while (!self->ready_.empty() && now - self->ready_.front().made >= self->idle_time_) {
        stale.push_back(std::move(self->ready_.front()));
        self->ready_.pop_front();
        self->target_ = self->target_ > 0 ? self->target_ - 1 : 0;
      }
    }
    for (auto& jail : stale) drop(std::move(jail), self->strand_);
    self->arm();
  });
}

void WarmJails::stop() {
  std::deque<WarmJail> dropping;
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    dropping.swap(ready_);
  }
  asio::post(strand_, [this, alive = weak_from_this()] {
    if (alive.lock()) idle_.cancel();
  });
  for (auto& jail : dropping) drop(std::move(jail), strand_);
}

std::size_t WarmJails::waiting() const {
  std::lock_guard lock(mutex_);
  return ready_.size();
}

void WarmJails::drop(WarmJail jail, const asio::any_io_executor& executor) {
  if (!jail.child) return;
  // The launcher waits for the call on its control socket; closing it makes the launcher exit on
  // its own, removing its cgroups. It is reaped (and, past a second, killed) in the background.
  if (jail.jail) jail.jail->close();
  auto run = [](std::unique_ptr<proc::Started> child,
                std::shared_ptr<confine::Confinement> confinement) -> asio::awaitable<void> {
    proc::RunLimits limits;
    limits.timeout = std::chrono::seconds(1);
    auto result = co_await proc::run_started(std::move(child), std::nullopt, limits);
    if (confinement) (void)confinement->finish(result);
  };
  asio::co_spawn(executor, run(std::move(jail.child), std::move(jail.jail)), asio::detached);
}

}  // namespace hearth::handlers::script
