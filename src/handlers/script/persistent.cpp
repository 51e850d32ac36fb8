#include "handlers/script/persistent.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cassert>

#include "common/ascii.hpp"
#include "common/on_strand.hpp"
#include "common/utf8.hpp"
#include "json/text.hpp"

namespace hearth::handlers::script {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

Error stopping_error() {
  return Error::make(ErrorCode::kHandlerError,
                     "the endpoint's persistent process was stopped (reload or shutdown)");
}

/// The first `n` characters of a line, for messages.
std::string excerpt(std::string_view line, std::size_t n = 120) {
  std::string out = valid_utf8(std::string(line.substr(0, n)));
  if (line.size() > n) out += "...";
  return out;
}

}  // namespace

/// One call waiting for, or running on, a process. Touched only on the strand.
struct Persistent::Slot {
  explicit Slot(asio::strand<asio::any_io_executor>& strand) : timer(strand) {}
  std::uint64_t id = 0;
  json::value input;
  std::chrono::milliseconds timeout{0};
  Publisher* publisher = nullptr;
  std::optional<Result<json::value>> result;
  asio::steady_timer timer;  ///< the deadline; cancelled when the result is in
};

/// One process. Its fields are touched on the strand, `gone` also under the mutex.
struct Persistent::Instance {
  std::uint64_t serial = 0;
  std::shared_ptr<proc::Duplex> child;
  std::shared_ptr<confine::Confinement> confinement;
  std::string buffer;       ///< stdout not yet ending in '\n'
  std::string stderr_tail;  ///< the last bytes of stderr
  std::shared_ptr<Slot> current;
  std::uint64_t served = 0;
  bool gone = false;  ///< killed or exited: takes no call, its exit is not reported again
};

Persistent::Persistent(const asio::any_io_executor& executor, PersistentSpec spec, Prepare prepare)
    : executor_(executor),
      strand_(asio::make_strand(executor)),
      spec_(std::move(spec)),
      prepare_(std::move(prepare)) {
  spec_.instances = std::max<std::size_t>(spec_.instances, 1);
}

Persistent::~Persistent() {
  stop();
}

asio::awaitable<Result<json::value>> Persistent::call(json::value input,
                                                      std::chrono::milliseconds timeout,
                                                      Publisher* publisher) {
  auto self = shared_from_this();
  auto work = self->call_on_strand(std::move(input), timeout, publisher);
  co_return co_await hearth::on(strand_, std::move(work));
}

asio::awaitable<Result<json::value>> Persistent::call_on_strand(json::value input,
                                                                std::chrono::milliseconds timeout,
                                                                Publisher* publisher) {
  assert(strand_.running_in_this_thread());
  if (stopped_) co_return stopping_error();
  auto slot = std::make_shared<Slot>(strand_);
  slot->id = ++next_id_;
  slot->input = std::move(input);
  slot->timeout = timeout;
  slot->publisher = publisher;
  slot->timer.expires_at(timeout.count() > 0 ? Clock::now() + timeout : Clock::time_point::max());
  queue_.push_back(slot);
  dispatch();
  if (!slot->result) {
    boost::system::error_code ec;
    co_await slot->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  if (!slot->result) {
    // The deadline passed: out of the queue, or its process killed (it may be anywhere in the
    // middle of the call, and the next call must not meet what it was doing).
    json::object data;
    data["timeoutMs"] = timeout.count();
    Error error = Error::make(ErrorCode::kTimeout,
                              "Handler timed out after " + std::to_string(timeout.count()) + " ms",
                              std::move(data));
    const auto queued = std::find(queue_.begin(), queue_.end(), slot);
    if (queued != queue_.end()) {
      queue_.erase(queued);
      error.message += " (no persistent process became free)";
      complete(*slot, std::move(error));
    } else {
      std::shared_ptr<Instance> running;
      {
        std::lock_guard lock(mutex_);
        for (const auto& instance : instances_) {
          if (instance->current == slot) running = instance;
        }
      }
      if (running) {
        spdlog::info("{}: a call ran out of time; killing persistent process {}", spec_.label,
                     running->serial);
        retire(running, std::move(error));
      } else {
        complete(*slot, std::move(error));
      }
      dispatch();
    }
  }
  co_return std::move(*slot->result);
}

void Persistent::complete(Slot& slot, Result<json::value> result) {
  if (slot.result) return;
  slot.result = std::move(result);
  slot.timer.cancel();
}

void Persistent::dispatch() {
  while (!queue_.empty() && !stopped_) {
    std::shared_ptr<Instance> free;
    std::size_t live = 0;
    {
      std::lock_guard lock(mutex_);
      for (const auto& instance : instances_) {
        if (instance->gone) continue;
        ++live;
        if (!free && !instance->current) free = instance;
      }
    }
    if (!free) {
      if (live >= spec_.instances) return;  // every process is busy: the queue waits
      if (Clock::now() < next_start_ && last_death_) {
        // A process that keeps dying: fail at once rather than start it again right away.
        const auto wait =
            std::chrono::duration_cast<std::chrono::milliseconds>(next_start_ - Clock::now());
        Error error = *last_death_;
        error.message +=
            " (the persistent process keeps exiting before it answers; next start in " +
            std::to_string(wait.count()) + " ms)";
        auto slot = queue_.front();
        queue_.pop_front();
        complete(*slot, std::move(error));
        continue;
      }
      Error error;
      free = spawn(error);
      if (!free) {
        for (auto& slot : queue_) complete(*slot, error);
        queue_.clear();
        return;
      }
    }
    auto slot = queue_.front();
    queue_.pop_front();
    send(*free, slot);
  }
}

std::shared_ptr<Persistent::Instance> Persistent::spawn(Error& error) {
  auto instance = std::make_shared<Instance>();
  instance->serial = ++next_serial_;
  proc::Command cmd;
  auto confinement = prepare_(cmd);
  if (!confinement.ok()) {
    error = std::move(confinement).error();
    spdlog::warn("{}: cannot start the persistent process: {}", spec_.label, error.message);
    return nullptr;
  }
  instance->confinement = std::move(confinement).value();

  // The callbacks run on this object's strand (start_duplex_on): output is handled in them.
  auto callbacks = proc::callbacks_for(shared_from_this(), instance, &Persistent::on_bytes,
                                       &Persistent::on_exit, &Instance::stderr_tail, kStderrTail);
  auto child = proc::start_duplex_on(strand_, cmd, std::move(callbacks));
  if (!child.ok()) {
    error = child.error();
    if (instance->confinement) instance->confinement->abandon(-1);
    spdlog::warn("{}: cannot start the persistent process: {}", spec_.label, error.message);
    return nullptr;
  }
  instance->child = std::move(child).value();
  ++starts_;
  spdlog::debug("{}: persistent process {} started", spec_.label, instance->serial);
  std::lock_guard lock(mutex_);
  if (stopped_) {
    // stop() ran meanwhile and did not see this one.
    instance->gone = true;
    instance->child->stop();
    if (instance->confinement) instance->confinement->abandon(instance->child->pid());
    error = stopping_error();
    return nullptr;
  }
  instances_.push_back(instance);
  return instance;
}

void Persistent::send(Instance& instance, const std::shared_ptr<Slot>& slot) {
  instance.current = slot;
  json::object request;
  request["id"] = slot->id;
  request["input"] = std::move(slot->input);
  std::string line = json::dump(json::value(std::move(request)));
  line += '\n';
  // A process that is gone already fails the call from on_exit.
  instance.child->write(std::move(line));
}

void Persistent::on_bytes(const std::shared_ptr<Instance>& instance, std::string_view bytes) {
  if (instance->gone) return;
  instance->buffer.append(bytes);
  std::size_t start = 0;
  while (!instance->gone) {
    const auto end = instance->buffer.find('\n', start);
    if (end == std::string::npos) break;
    const std::string line = instance->buffer.substr(start, end - start);
    start = end + 1;
    on_line(instance, line);
  }
  if (instance->gone) return;
  instance->buffer.erase(0, start);
  if (instance->buffer.size() > spec_.max_line) {
    broke_protocol(instance, "a stdout line longer than " + std::to_string(spec_.max_line) +
                                 " bytes (the handler's output limit)");
  }
}

void Persistent::on_line(const std::shared_ptr<Instance>& instance, std::string_view line) {
  if (ascii::trim(line, " \t\r").empty()) return;
  auto parsed = json::parse_text(line);
  const json::object* message = parsed.ok() ? parsed->if_object() : nullptr;
  if (message == nullptr) {
    broke_protocol(instance, "a stdout line that is not a JSON object: " + excerpt(line));
    return;
  }
  if (const auto* target = message->if_contains("publish")) {
    if (!target->is_string()) {
      broke_protocol(instance, "\"publish\" must name a subscription endpoint");
      return;
    }
    const json::value* data = message->if_contains("data");
    Publisher* publisher = instance->current ? instance->current->publisher : nullptr;
    if (publisher == nullptr ||
        !publisher->publish(target->get_string(), data != nullptr ? *data : json::value())) {
      spdlog::warn("{}: ignoring a publish to '{}' ({})", spec_.label,
                   std::string(target->get_string()),
                   publisher == nullptr ? "no call in progress"
                                        : "not a subscription endpoint of the service");
    }
    return;
  }
  const json::value* id = message->if_contains("id");
  const auto& slot = instance->current;
  const bool matches = slot && id != nullptr &&
                       ((id->is_int64() && id->get_int64() >= 0 &&
                         static_cast<std::uint64_t>(id->get_int64()) == slot->id) ||
                        (id->is_uint64() && id->get_uint64() == slot->id));
  if (!matches) {
    broke_protocol(instance, "an answer with no call of that id in progress: " + excerpt(line));
    return;
  }
  Result<json::value> result = json::value(nullptr);
  if (const auto* error = message->if_contains("error")) {
    const json::object* object = error->if_object();
    const json::value* text = object != nullptr ? object->if_contains("message") : nullptr;
    if (text == nullptr || !text->is_string()) {
      broke_protocol(instance, "an error answer without a \"message\" string: " + excerpt(line));
      return;
    }
    json::object data;
    if (const auto* extra = object->if_contains("data")) data["data"] = *extra;
    result = Error::make(ErrorCode::kHandlerError, std::string(text->get_string()),
                         data.empty() ? json::value() : json::value(std::move(data)));
  } else if (const auto* value = message->if_contains("result")) {
    result = *value;
  } else {
    broke_protocol(instance, "an answer with neither \"result\" nor \"error\": " + excerpt(line));
    return;
  }
  auto done = std::move(instance->current);
  complete(*done, std::move(result));
  ++instance->served;
  quick_deaths_ = 0;
  last_death_.reset();
  if (spec_.max_calls > 0 && instance->served >= spec_.max_calls) {
    spdlog::debug("{}: persistent process {} served its {} calls; replacing it", spec_.label,
                  instance->serial, spec_.max_calls);
    retire(instance, std::nullopt);
  }
  dispatch();
}

void Persistent::broke_protocol(const std::shared_ptr<Instance>& instance, const std::string& why) {
  spdlog::warn("{}: persistent process {} broke the line protocol ({}); killing it", spec_.label,
               instance->serial, why);
  json::object data;
  data["stderr"] = confine::stderr_excerpt(instance->stderr_tail);
  retire(instance,
         Error::make(ErrorCode::kHandlerError, "Handler broke the persistent line protocol: " + why,
                     std::move(data)));
  dispatch();
}

void Persistent::retire(const std::shared_ptr<Instance>& instance, std::optional<Error> error) {
  {
    std::lock_guard lock(mutex_);
    if (!instance->gone) {
      instance->gone = true;
      const int pid = instance->child->pid();
      instance->child->stop();
      if (instance->confinement) instance->confinement->abandon(pid);
    }
    instances_.erase(std::remove(instances_.begin(), instances_.end(), instance), instances_.end());
  }
  if (instance->current) {
    complete(*instance->current, error ? std::move(*error) : stopping_error());
    instance->current.reset();
  }
}

void Persistent::on_exit(const std::shared_ptr<Instance>& instance, const proc::RunResult& result) {
  {
    std::lock_guard lock(mutex_);
    if (instance->gone) return;  // killed on purpose: already accounted for
    instance->gone = true;
    instances_.erase(std::remove(instances_.begin(), instances_.end(), instance), instances_.end());
  }
  std::optional<Error> verdict;
  if (instance->confinement) verdict = instance->confinement->finish(result);
  Error error;
  if (verdict) {
    error = std::move(*verdict);
  } else {
    json::object data;
    const std::string how = confine::ended_how(result, data);
    data["stderr"] = confine::stderr_excerpt(instance->stderr_tail);
    error = Error::make(ErrorCode::kHandlerError, "Handler " + how, std::move(data));
  }
  if (instance->served == 0) {
    ++quick_deaths_;
    last_death_ = error;
    if (quick_deaths_ >= 2) {
      const auto pause = std::min<std::chrono::milliseconds>(
          kMaxBackoff, std::chrono::milliseconds(100L << std::min(quick_deaths_ - 2, 10)));
      next_start_ = Clock::now() + pause;
    }
  }
  spdlog::info("{}: persistent process {} ended ({}) after {} calls", spec_.label, instance->serial,
               error.message, instance->served);
  if (instance->current) {
    complete(*instance->current, std::move(error));
    instance->current.reset();
  }
  dispatch();
}

void Persistent::stop() {
  if (stopped_.exchange(true)) return;
  std::vector<std::shared_ptr<Instance>> instances;
  {
    std::lock_guard lock(mutex_);
    for (const auto& instance : instances_) {
      if (instance->gone) continue;
      instance->gone = true;
      const int pid = instance->child->pid();
      instance->child->stop();
      if (instance->confinement) instance->confinement->abandon(pid);
    }
    instances.swap(instances_);
  }
  // What waits is failed on the strand (slots are strand state).
  auto self = weak_from_this().lock();
  if (!self) return;  // being destroyed: no coroutine can be waiting (each holds a reference)
  asio::post(strand_, [self, instances = std::move(instances)] {
    for (const auto& instance : instances) {
      if (instance->current) complete(*instance->current, stopping_error());
      instance->current.reset();
    }
    for (auto& slot : self->queue_) complete(*slot, stopping_error());
    self->queue_.clear();
  });
}

}  // namespace hearth::handlers::script
