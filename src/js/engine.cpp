#include "js/engine.hpp"

#include <fcntl.h>
#include <js/Array.h>
#include <js/CallAndConstruct.h>
#include <js/CharacterEncoding.h>
#include <js/CompilationAndEvaluation.h>
#include <js/CompileOptions.h>
#include <js/Context.h>
#include <js/ContextOptions.h>
#include <js/Conversions.h>
#include <js/Date.h>
#include <js/ErrorReport.h>
#include <js/Exception.h>
#include <js/GCAPI.h>
#include <js/GlobalObject.h>
#include <js/Initialization.h>
#include <js/Interrupt.h>
#include <js/JSON.h>
#include <js/Modules.h>
#include <js/Promise.h>
#include <js/PropertyAndElement.h>
#include <js/Realm.h>
#include <js/SourceText.h>
#include <js/Stack.h>
#include <js/String.h>
#include <js/experimental/JSStencil.h>
#include <jsapi.h>
#include <jsfriendapi.h>
#include <mozilla/RefPtr.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "common/atomic_file.hpp"
#include "common/fd.hpp"
#include "common/utf8.hpp"
#include "jail/glob.hpp"
#include "js/fetch.hpp"
#include "js/modules.hpp"

namespace hearth::js {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

/// The clock an evaluation is pinned to (microseconds since the epoch), read by every time
/// source of the engine through its time-precision hook; absent: the real clock.
std::optional<double> g_pinned_clock_us;

double pinned_clock(double now_us, JSContext* /*cx*/) {
  return g_pinned_clock_us ? *g_pinned_clock_us : now_us;
}

// ---------------------------------------------------------------------------------------------
// Engine.

constexpr std::uint64_t kDefaultHeap = std::uint64_t{1} << 30;
/// A full GC after this many calls, or sooner when the heap passes kGcBytes: each call leaves a
/// dead realm behind, and collecting them often keeps the heap small (docs/benchmarks.md).
constexpr int kCallsPerGc = 100;
constexpr std::uint32_t kGcBytes = 64u << 20;

JSClass kGlobalClass = {
    "global", JSCLASS_GLOBAL_FLAGS, &JS::DefaultGlobalClassOps, nullptr, nullptr, nullptr};

/// Resident memory of this process, in bytes (0 when unknown).
std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

/// Stops a call from another thread: at its deadline, or when the process's resident memory
/// passes its limit. The heap limit (JSGC_MAX_BYTES) counts only GC cells, not the malloc'd
/// elements of big arrays or strings, so memory is also watched here; RLIMIT_AS and the jail's
/// memory cgroup remain the hard stops.
///
/// Arming costs the calling thread two atomic stores: the watchdog ticks every kTick while calls
/// come, and sleeps on a condition variable (woken by arm()) only after a second without one, so
/// a busy worker pays no thread wake-up per call. Deadlines are therefore met within kTick.
class Watchdog {
 public:
  static constexpr auto kTick = std::chrono::milliseconds(5);

  explicit Watchdog(JSContext* cx) : cx_(cx), thread_([this] { loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  /// `memory_limit`: resident bytes beyond which the call is stopped; 0: not watched.
  void arm(Clock::time_point deadline, std::uint64_t memory_limit) {
    fired_.store(false, std::memory_order_relaxed);
    over_memory_.store(false, std::memory_order_relaxed);
    memory_limit_.store(memory_limit, std::memory_order_relaxed);
    deadline_ns_.store(deadline.time_since_epoch().count(), std::memory_order_release);
    if (sleeping_.load(std::memory_order_acquire)) {
      std::lock_guard lock(mutex_);
      changed_.notify_all();
    }
  }
  void disarm() { deadline_ns_.store(kNone, std::memory_order_release); }
  bool fired() const { return fired_.load(); }
  bool over_memory() const { return over_memory_.load(); }

 private:
  static constexpr Clock::rep kNone = std::numeric_limits<Clock::rep>::max();

  void loop() {
    auto last_armed = Clock::now();
    std::unique_lock lock(mutex_);
    while (!quit_) {
      auto deadline = deadline_ns_.load(std::memory_order_acquire);
      const auto now = Clock::now();
      if (deadline == kNone) {
        if (now - last_armed > std::chrono::seconds(1)) {
          sleeping_.store(true, std::memory_order_release);
          // Re-checked under the lock: an arm() between the load and here notifies.
          changed_.wait(lock, [this] {
            return quit_ || deadline_ns_.load(std::memory_order_acquire) != kNone;
          });
          sleeping_.store(false, std::memory_order_release);
          last_armed = Clock::now();
          continue;
        }
      } else {
        last_armed = now;
        const std::uint64_t limit = memory_limit_.load(std::memory_order_relaxed);
        const bool late = now.time_since_epoch().count() >= deadline;
        const bool over = !late && limit > 0 && resident_bytes() > limit;
        // Only the call armed now: a new arm() since the load wins the exchange.
        if ((late || over) && deadline_ns_.compare_exchange_strong(deadline, kNone)) {
          over_memory_ = over;
          fired_ = true;
          JS_RequestInterruptCallback(cx_);
          continue;
        }
      }
      changed_.wait_for(lock, kTick);
    }
  }

  JSContext* cx_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::atomic<Clock::rep> deadline_ns_{kNone};
  std::atomic<std::uint64_t> memory_limit_{0};
  std::atomic<bool> fired_{false};
  std::atomic<bool> over_memory_{false};
  std::atomic<bool> sleeping_{false};
  bool quit_ = false;
  std::thread thread_;
};

std::string to_utf8(JSContext* cx, JS::HandleString s) {
  if (!s) return {};
  JS::UniqueChars chars = JS_EncodeStringToUTF8(cx, s);
  return chars ? std::string(chars.get()) : std::string();
}

std::string value_to_string(JSContext* cx, JS::HandleValue v) {
  JS::RootedString s(cx, JS::ToString(cx, v));
  if (!s) {
    JS_ClearPendingException(cx);
    return "(unprintable value)";
  }
  return to_utf8(cx, s);
}

JSString* new_string(JSContext* cx, std::string_view utf8) {
  const std::string valid = valid_utf8(utf8);
  return JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(valid.data(), valid.size()));
}

/// UTF-16 code units (well formed: JSON.stringify escapes lone surrogates) to UTF-8.
void append_utf16(std::string& out, const char16_t* s, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint32_t c = s[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n && s[i + 1] >= 0xDC00 && s[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00);
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
}

bool stringify_callback(const char16_t* buf, std::uint32_t len, void* data) {
  append_utf16(*static_cast<std::string*>(data), buf, len);
  return true;
}

/// JSON text of `v`, "null" for undefined/functions. False with an exception pending on failure
/// (a cycle, a BigInt).
bool stringify(JSContext* cx, JS::HandleValue v, std::string& out) {
  out.clear();
  JS::RootedValue copy(cx, v);
  if (!JS_Stringify(cx, &copy, nullptr, JS::NullHandleValue, stringify_callback, &out)) {
    return false;
  }
  if (out.empty()) out = "null";
  return true;
}

bool parse_json(JSContext* cx, std::string_view text, JS::MutableHandleValue out) {
  JS::RootedString s(cx, new_string(cx, text));
  return s && JS_ParseJSON(cx, s, out);
}

struct CachedScript {
  RefPtr<JS::Stencil> stencil;
  bool module = false;
  std::int64_t mtime_ns = 0;
  std::int64_t size = 0;
  std::string filename;
};

struct Timer {
  std::uint32_t id = 0;
  Clock::time_point due;
  std::unique_ptr<JS::PersistentRootedValue> callback;
  std::vector<std::unique_ptr<JS::PersistentRootedValue>> args;
};

/// The endpoint's networkAccess as the daemon sent it (the manifest had it parsed already), parsed
/// once per worker: a list that does not parse refuses every ctx.fetch.
Result<egress::NetworkPolicy> network_policy(
    const std::variant<bool, std::vector<std::string>>& network) {
  if (const bool* all = std::get_if<bool>(&network)) return egress::NetworkPolicy(*all);
  return egress::NetworkPolicy::parse(std::get<std::vector<std::string>>(network));
}

class SpiderMonkeyEngine;
SpiderMonkeyEngine* engine_of(JSContext* cx) {
  return static_cast<SpiderMonkeyEngine*>(JS_GetContextPrivate(cx));
}

class SpiderMonkeyEngine final : public Engine {
  struct Prepared;  // below, with the engine's other state

 public:
  /// The engine's promise rejection tracker: during an evaluation, promises rejected with no
  /// handler are kept, so that an evaluation that leaves one behind fails with its reason (a
  /// forgotten `await` must not pass silently).
  void track_rejection(JS::HandleObject promise, JS::PromiseRejectionHandlingState state) {
    if (!track_rejections_) return;
    if (state == JS::PromiseRejectionHandlingState::Unhandled) {
      rejected_.push_back(std::make_unique<JS::PersistentRootedObject>(cx_, promise));
      return;
    }
    std::erase_if(rejected_, [&](const auto& p) { return p->get() == promise.get(); });
  }

  SpiderMonkeyEngine(WorkerConfig config, JSContext* cx)
      : config_(std::move(config)),
        network_(network_policy(config_.network)),
        cx_(cx),
        watchdog_(cx),
        baseline_(resident_bytes()) {
    if (config_.file_access) globs_ = jail::GlobSet(*config_.file_access);
  }

  ~SpiderMonkeyEngine() override {
    prepared_.reset();
    kept_.clear();
    modules_.clear();
    timers_.clear();
    cache_.clear();
    // The context and the engine are torn down by process exit: JS_DestroyContext after a heap
    // limit failure is not reliable, and the worker exits right after anyway.
  }

  Outcome call(const CallRequest& request, const CallSink& sink) override {
    return with_limits(request, sink, [this, &request] { return run(request); });
  }

  Outcome evaluate(const EvalRequest& request, const CallSink& sink) override {
    // What the rest of the engine knows of the running request: its name in logs, its time
    // limit; no function, no module (so no ctx, and no folder locks: it has no file access).
    CallRequest as_call;
    as_call.id = request.id;
    as_call.endpoint = request.filename;
    as_call.timeout = request.timeout;
    g_pinned_clock_us =
        request.clock_ms ? std::optional<double>(*request.clock_ms * 1000.0) : std::nullopt;
    track_rejections_ = true;
    Outcome out = with_limits(as_call, sink, [this, &request] { return run_source(request); });
    track_rejections_ = false;
    rejected_.clear();
    g_pinned_clock_us.reset();
    return out;
  }

  /// Runs `body` as the current request: its deadline and memory limit armed, its timers, locks
  /// and modules dropped after it.
  template <class Body>
  Outcome with_limits(const CallRequest& request, const CallSink& sink, Body body) {
    request_ = &request;
    sink_ = &sink;
    deadline_ = Clock::now() + request.timeout;
    failure_.reset();
    checked_.clear();
    timers_.clear();
    next_timer_ = 1;
    watchdog_.arm(deadline_, config_.max_heap > 0 ? baseline_ + config_.max_heap : 0);
    Outcome out = body();
    watchdog_.disarm();
    report_suppressed_logs();
    locks_.clear();  // closing the descriptors releases the flocks
    modules_.clear();
    timers_.clear();
    failure_.reset();
    request_ = nullptr;
    sink_ = nullptr;
    return out;
  }

  /// A call's global: a new realm in the worker's one compartment. Realms in one compartment
  /// share a zone, which a full GC every few calls keeps small; a new zone per call is collected
  /// far less eagerly and grew the heap by ~75 MB per 1,000 calls when measured.
  ///
  /// A kept realm (`isolation: "worker"`) keeps its compiled code through full collections:
  /// SpiderMonkey otherwise throws away a realm's JIT code at each one (every kCallsPerGc calls),
  /// and the module's functions ran in the interpreter again and were compiled again, each
  /// compilation making code pages writable and back (docs/benchmarks.md, "A kept module's
  /// compiled code").
  JSObject* new_global(bool kept = false) {
    JS::RealmOptions options;
    if (anchor_) options.creationOptions().setExistingCompartment(anchor_.get());
    options.creationOptions().setPreserveJitCode(kept);
    JSObject* global =
        JS_NewGlobalObject(cx_, &kGlobalClass, nullptr, JS::FireOnNewGlobalHook, options);
    if (global != nullptr && !anchor_) anchor_.init(cx_, global);
    return global;
  }

  void after_answer() override {
    if (full_collection_due()) {
      calls_since_gc_ = 0;
      JS_GC(cx_);
    } else {
      ++calls_since_gc_;
      JS_MaybeGC(cx_);
    }
  }

  bool full_collection_due() const override {
    return calls_since_gc_ + 1 >= kCallsPerGc || JS_GetGCParameter(cx_, JSGC_BYTES) > kGcBytes;
  }

  double measure_fresh_global(int iterations, bool eager_classes) override {
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) {
      {
        JS::RootedObject global(cx_, new_global());
        if (!global) return -1;
        JSAutoRealm realm(cx_, global);
        if (eager_classes && !JS::InitRealmStandardClasses(cx_)) return -1;
        if (!define_globals(global)) return -1;
      }
      after_answer();
    }
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iterations;
  }

  // --- Called from the engine's hooks and natives -------------------------------------------

  bool interrupted() const { return watchdog_.fired(); }

  JSObject* import_module(std::string_view referrer, std::string_view specifier) {
    Resolved r = resolve_import(config_.service_dir, referrer, specifier);
    if (!r.error.empty()) {
      JS_ReportErrorUTF8(cx_, "%s", r.error.c_str());
      return nullptr;
    }
    return load_module(r.path);
  }

  /// The module record for `rel`, instantiated in the current realm (once per call).
  JSObject* load_module(const std::string& rel) {
    if (auto it = module_map_->find(rel); it != module_map_->end()) return it->second->get();
    CachedScript* script = compile(rel, /*as_module=*/std::optional<bool>(true));
    if (script == nullptr) return nullptr;
    if (!script->module) {
      JS_ReportErrorUTF8(cx_,
                         "'%s' is not an ES module (no import or export): it cannot be imported",
                         rel.c_str());
      return nullptr;
    }
    JS::CompileOptions options(cx_);
    options.setFileAndLine(script->filename.c_str(), 1);
    JS::InstantiateOptions instantiate(options);
    JS::RootedObject module(cx_, JS::InstantiateModuleStencil(cx_, instantiate, script->stencil));
    if (!module) return nullptr;
    JS::RootedString name(cx_, new_string(cx_, rel));
    if (!name) return nullptr;
    JS::SetModulePrivate(module, JS::StringValue(name));
    module_map_->emplace(rel, std::make_unique<JS::PersistentRootedObject>(cx_, module));
    return module;
  }

  std::optional<Clock::time_point> next_timer_due() const {
    std::optional<Clock::time_point> due;
    for (const auto& t : timers_) {
      if (!due || t.due < *due) due = t.due;
    }
    return due;
  }

  std::uint32_t add_timer(JS::HandleValue callback, std::chrono::milliseconds delay,
                          const JS::CallArgs& args, unsigned first_arg) {
    Timer t;
    t.id = next_timer_++;
    t.due = Clock::now() + delay;
    t.callback = std::make_unique<JS::PersistentRootedValue>(cx_, callback);
    for (unsigned i = first_arg; i < args.length(); ++i) {
      t.args.push_back(std::make_unique<JS::PersistentRootedValue>(cx_, args[i]));
    }
    timers_.push_back(std::move(t));
    return timers_.back().id;
  }

  void clear_timer(std::uint32_t id) {
    for (auto it = timers_.begin(); it != timers_.end(); ++it) {
      if (it->id == id) {
        timers_.erase(it);
        return;
      }
    }
  }

  const CallRequest& request() const { return *request_; }
  const CallSink& sink() const { return *sink_; }
  const WorkerConfig& config() const { return config_; }
  Clock::time_point deadline() const { return deadline_; }

  /// A data path of ctx.readFile / ctx.writeFile, checked against fileAccess (the jail checks
  /// again). Throws a PermissionDeniedError or Error into the context and returns nullopt.
  std::optional<fs::path> data_path(std::string_view requested, bool for_write) {
    const char* verb = for_write ? "ctx.writeFile" : "ctx.readFile";
    if (!config_.file_access || config_.file_access->empty()) {
      throw_permission(std::string(verb) + ": this endpoint has no fileAccess permission");
      return std::nullopt;
    }
    if (requested.empty() || requested.find('\0') != std::string_view::npos) {
      throw_error("TypeError", std::string(verb) + ": the path must be a non-empty string");
      return std::nullopt;
    }
    fs::path rel;
    switch (jail::check_requested_path(config_.service_dir, globs_, requested, rel)) {
      case jail::PathVerdict::kOutside:
        throw_permission(std::string(verb) + ": '" + std::string(requested) +
                         "' is outside the service folder");
        return std::nullopt;
      case jail::PathVerdict::kNotCovered:
        throw_permission(std::string(verb) + ": '" + rel.generic_string() +
                         "' is not covered by the endpoint's fileAccess");
        return std::nullopt;
      case jail::PathVerdict::kAllowed:
        break;
    }
    // The folder is locked before the file is looked at: a mutation that finds the file missing
    // and creates it must not interleave with another doing the same.
    std::error_code ec;
    fs::path target = config_.service_dir / rel;
    {
      std::error_code pec;
      const fs::path parent = fs::canonical(target.parent_path(), pec);
      if (!pec && is_inside(config_.service_dir, parent) &&
          !lock_for_call(parent / target.filename(), verb)) {
        return std::nullopt;
      }
    }
    // Links are followed, then the real path is checked again: a link must not lead out.
    fs::path real = for_write && !fs::exists(fs::symlink_status(target, ec))
                        ? fs::canonical(target.parent_path(), ec) / target.filename()
                        : fs::canonical(target, ec);
    if (ec) {
      throw_error(
          "Error",
          std::string(verb) + ": cannot open '" + rel.generic_string() + "': " + ec.message(),
          ec == std::errc::no_such_file_or_directory ? "ENOENT" : "EIO");
      return std::nullopt;
    }
    if (!jail::real_path_allowed(config_.service_dir, globs_, real)) {
      throw_permission(std::string(verb) + ": '" + rel.generic_string() +
                       "' leads outside the endpoint's fileAccess");
      return std::nullopt;
    }
    return real;
  }

  /// Locks the folder of `real` for the rest of the call (exclusive for a mutation, else shared),
  /// waiting for other calls until the deadline. The folder rather than the file, so that a file
  /// two calls both create is covered too; the file itself when the jail does not let the worker
  /// open its folder (a fileAccess pattern naming one file). False with an error thrown when the
  /// lock cannot be had in time.
  bool lock_for_call(const fs::path& real, const char* verb) {
    const fs::path folder = real.parent_path();
    if (locks_.count(folder.string()) != 0 || locks_.count(real.string()) != 0) return true;
    std::string key = folder.string();
    Fd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) {
      key = real.string();
      fd.reset(::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    }
    if (!fd) return true;  // nothing to lock on: the open that follows reports the problem
    const int op = (request_->mutation ? LOCK_EX : LOCK_SH) | LOCK_NB;
    while (::flock(fd.get(), op) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) break;  // locking unsupported: go on unlocked
      if (Clock::now() >= deadline_ || interrupted()) {
        throw_error("Error",
                    std::string(verb) + ": '" +
                        real.lexically_relative(config_.service_dir).generic_string() +
                        "' stayed locked by another call until the time limit",
                    "EBUSY");
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    locks_.emplace(std::move(key), std::move(fd));
    return true;
  }

  void throw_permission(const std::string& message) {
    throw_error("PermissionDeniedError", message, "EACCES");
  }

  void throw_error(const char* name, const std::string& message, const char* code = nullptr) {
    JS_ReportErrorUTF8(cx_, "%s", message.c_str());
    JS::RootedValue exc(cx_);
    if (!JS_GetPendingException(cx_, &exc) || !exc.isObject()) return;
    JS::RootedObject obj(cx_, &exc.toObject());
    JS::RootedValue v(cx_);
    JS::RootedString s(cx_, JS_NewStringCopyZ(cx_, name));
    if (s) {
      v.setString(s);
      JS_DefineProperty(cx_, obj, "name", v, JSPROP_ENUMERATE);
    }
    if (code != nullptr && (s = JS_NewStringCopyZ(cx_, code))) {
      v.setString(s);
      JS_DefineProperty(cx_, obj, "code", v, JSPROP_ENUMERATE);
    }
  }

 private:
  Outcome run(const CallRequest& request) {
    if (request.keep_state) return run_kept(request);
    JS::RootedObject global(cx_);
    if (auto ready = take_prepared(request.module)) {
      global = ready->global->get();
      modules_ = std::move(ready->modules);  // the module graph instantiated in that realm
    } else {
      global = new_global();
      if (!global) return take_exception();
      JSAutoRealm realm(cx_, global);
      // The standard classes resolve lazily (DefaultGlobalClassOps' resolve hooks): initialising
      // them all up front costs ~300 us a global, a lazy global ~23 us (docs/benchmarks.md).
      if (!define_globals(global)) return take_exception();
    }
    JSAutoRealm realm(cx_, global);
    JS::RootedObject exports(cx_);
    bool is_module = false;
    if (auto failed = load_entry(request, global, &exports, is_module)) return std::move(*failed);
    return call_export(request, global, exports, is_module);
  }

  void prepare(const std::string& module) override {
    prepared_.reset();
    if (!last_prepared_used_) {  // the last one was not used: skip one
      last_prepared_used_ = true;
      return;
    }
    JS::RootedObject global(cx_, new_global());
    if (!global) {
      JS_ClearPendingException(cx_);
      return;
    }
    JSAutoRealm realm(cx_, global);
    auto ready = std::make_unique<Prepared>();
    ready->module = module;
    CachedScript* script = define_globals(global) ? compile(module, std::nullopt) : nullptr;
    bool linked = false;
    if (script != nullptr && script->module) {
      module_map_ = &ready->modules;
      JS::RootedObject entry(cx_, load_module(module));
      // The namespace runs none of the module's code to make (its exports are resolved, not
      // read), and the call would spend 14-15 us making it.
      linked = entry && JS::ModuleInstantiate(cx_, entry) &&
               JS::GetModuleNamespace(cx_, entry) != nullptr;
      module_map_ = &modules_;
    }
    if (!linked) {  // a plain script, or one that fails: the call does it all, and reports it
      JS_ClearPendingException(cx_);
      return;
    }
    for (const auto& [rel, instance] : ready->modules) {
      auto it = cache_.find(rel);
      if (it == cache_.end()) return;
      ready->sources.emplace_back(rel, it->second.stencil);
    }
    ready->global = std::make_unique<JS::PersistentRootedObject>(cx_, global);
    prepared_ = std::move(ready);
  }

  /// The prepared realm for a call of `module`, when there is one and every file it was made
  /// from is as it was; otherwise nothing, and whatever was prepared is dropped.
  std::unique_ptr<Prepared> take_prepared(const std::string& module) {
    if (!prepared_) return nullptr;
    std::unique_ptr<Prepared> ready = std::move(prepared_);
    last_prepared_used_ = ready->module == module;
    if (!last_prepared_used_) return nullptr;
    JS::RootedObject global(cx_, ready->global->get());
    JSAutoRealm realm(cx_, global);
    for (const auto& [rel, stencil] : ready->sources) {
      CachedScript* now = compile(rel, std::nullopt);
      if (now == nullptr || now->stencil.get() != stencil.get()) {
        JS_ClearPendingException(cx_);
        return nullptr;
      }
    }
    return ready;
  }

  /// A call of a module whose realm the worker keeps between calls (`isolation: "worker"`): the
  /// first call makes the realm and evaluates the module, later ones only call the export.
  Outcome run_kept(const CallRequest& request) {
    auto it = kept_.find(request.module);
    if (it == kept_.end()) {
      JS::RootedObject global(cx_, new_global(/*kept=*/true));
      if (!global) return take_exception();
      JSAutoRealm realm(cx_, global);
      if (!define_globals(global)) return take_exception();
      auto kept = std::make_unique<Kept>();
      module_map_ = &kept->modules;
      JS::RootedObject exports(cx_);
      bool is_module = false;
      auto failed = load_entry(request, global, &exports, is_module);
      module_map_ = &modules_;
      if (failed) return std::move(*failed);
      kept->global = std::make_unique<JS::PersistentRootedObject>(cx_, global);
      kept->exports = std::make_unique<JS::PersistentRootedObject>(cx_, exports);
      kept->is_module = is_module;
      it = kept_.emplace(request.module, std::move(kept)).first;
    }
    Kept& kept = *it->second;
    JS::RootedObject global(cx_, kept.global->get());
    JS::RootedObject exports(cx_, kept.exports->get());
    JSAutoRealm realm(cx_, global);
    module_map_ = &kept.modules;  // a dynamic import() finds the instances this realm has
    Outcome out = call_export(request, global, exports, kept.is_module);
    module_map_ = &modules_;
    if (out.kind == Outcome::Kind::kTimeout || out.kind == Outcome::Kind::kOutOfMemory) {
      // Stopped anywhere: the module's state may be half changed. The next call starts afresh.
      kept_.erase(request.module);
    }
    return out;
  }

  /// Compiles and evaluates the request's module (or plain script) in the current realm, whose
  /// global is `global`; `exports` gets the module namespace (or `module.exports` of a script,
  /// null when it is not an object).
  std::optional<Outcome> load_entry(const CallRequest& request, JS::HandleObject global,
                                    JS::MutableHandleObject exports, bool& is_module) {
    CachedScript* script = compile(request.module, std::nullopt);
    if (script == nullptr) return config_error_from_exception();
    is_module = script->module;
    if (script->module) {
      JS::RootedObject module(cx_, load_module(request.module));
      if (!module || !JS::ModuleInstantiate(cx_, module)) return config_error_from_exception();
      JS::RootedValue evaluated(cx_);
      if (!JS::ModuleEvaluate(cx_, module, &evaluated)) return take_exception();
      if (auto failed = settle(&evaluated)) return failed;
      exports.set(JS::GetModuleNamespace(cx_, module));
      if (!exports) return take_exception();
      return std::nullopt;
    }
    // A plain script: `module.exports.f`, `exports.f` or a global function `f`.
    JS::RootedObject module_obj(cx_, JS_NewPlainObject(cx_));
    JS::RootedObject initial(cx_, JS_NewPlainObject(cx_));
    if (!module_obj || !initial) return take_exception();
    JS::RootedValue v(cx_, JS::ObjectValue(*initial));
    if (!JS_DefineProperty(cx_, module_obj, "exports", v, JSPROP_ENUMERATE) ||
        !JS_DefineProperty(cx_, global, "exports", v, JSPROP_ENUMERATE)) {
      return take_exception();
    }
    v.setObject(*module_obj);
    if (!JS_DefineProperty(cx_, global, "module", v, JSPROP_ENUMERATE)) return take_exception();
    JS::CompileOptions copts(cx_);
    copts.setFileAndLine(script->filename.c_str(), 1);
    JS::InstantiateOptions instantiate(copts);
    JS::RootedScript compiled(cx_, JS::InstantiateGlobalStencil(cx_, instantiate, script->stencil));
    JS::RootedValue ignored(cx_);
    if (!compiled || !JS_ExecuteScript(cx_, compiled, &ignored)) return take_exception();
    JS::RootedValue nothing(cx_);
    if (auto failed = settle(&nothing)) return failed;
    JS::RootedValue exported(cx_);
    if (!JS_GetProperty(cx_, module_obj, "exports", &exported)) return take_exception();
    exports.set(exported.isObject() ? &exported.toObject() : nullptr);
    return std::nullopt;
  }

  /// Calls the request's function: an export of `exports` (for a plain script, else a global
  /// function of that name) with the input and a fresh ctx.
  Outcome call_export(const CallRequest& request, JS::HandleObject global, JS::HandleObject exports,
                      bool is_module) {
    JS::RootedValue fn(cx_);
    if (exports && !JS_GetProperty(cx_, exports, request.function.c_str(), &fn)) {
      return take_exception();
    }
    if (!is_module && !fn.isObject() &&
        !JS_GetProperty(cx_, global, request.function.c_str(), &fn)) {
      return take_exception();
    }
    if (!fn.isObject() || !JS::IsCallable(&fn.toObject())) {
      Outcome out;
      out.kind = Outcome::Kind::kConfig;
      out.name = "Error";
      out.message =
          "'" + request.module + "' does not export a function named '" + request.function + "'";
      out.file = request.module;
      return out;
    }

    JS::RootedValue input(cx_);
    if (!parse_json(cx_, request.input_json, &input)) return take_exception();
    JS::RootedObject ctx(cx_, make_ctx(input));
    if (!ctx) return take_exception();
    JS::RootedValueArray<2> args(cx_);
    args[0].set(input);
    args[1].setObject(*ctx);
    JS::RootedValue result(cx_);
    if (!JS_CallFunctionValue(cx_, nullptr, fn, args, &result)) return take_exception();
    if (auto failed = settle(&result)) return std::move(*failed);

    Outcome out;
    if (!stringify(cx_, result, out.value_json)) return take_exception();
    return out;
  }

  /// The text an evaluation's source is compiled as: the body of a strict async function. The
  /// prefix is one line, and the source starts a line, so its lines and columns are reported as
  /// they are in the source when it is compiled from line 0.
  static constexpr std::string_view kSourcePrefix = "(async function () {\"use strict\";\n";
  static constexpr std::string_view kSourceSuffix = "\n})";

  Outcome run_source(const EvalRequest& request) {
    JS::RootedObject global(cx_, new_global());
    if (!global) return take_exception();
    JSAutoRealm realm(cx_, global);
    if (!define_globals(global)) return take_exception();
    if (request.io && !define_io(global)) return take_exception();

    // The caller's globals: plain writable copies of their JSON values.
    JS::RootedValue given(cx_);
    if (!parse_json(cx_, request.globals_json, &given)) return take_exception();
    if (!given.isObject()) return script_error("TypeError", "the globals must be a JSON object");
    JS::RootedObject given_obj(cx_, &given.toObject());
    JS::Rooted<JS::IdVector> names(cx_, JS::IdVector(cx_));
    if (!JS_Enumerate(cx_, given_obj, &names)) return take_exception();
    JS::RootedValue v(cx_);
    for (std::size_t i = 0; i < names.length(); ++i) {
      if (!JS_GetPropertyById(cx_, given_obj, names[i], &v) ||
          !JS_DefinePropertyById(cx_, global, names[i], v, JSPROP_ENUMERATE)) {
        return take_exception();
      }
    }

    if (!request.prelude.empty()) {
      JS::CompileOptions prelude_options(cx_);
      prelude_options.setFileAndLine(request.prelude_filename.c_str(), 1);
      JS::SourceText<mozilla::Utf8Unit> prelude;
      if (!prelude.init(cx_, request.prelude.data(), request.prelude.size(),
                        JS::SourceOwnership::Borrowed)) {
        return take_exception();
      }
      JS::RootedValue ignored(cx_);
      if (!JS::Evaluate(cx_, prelude_options, prelude, &ignored)) return take_exception();
    }

    std::string text;
    text.reserve(kSourcePrefix.size() + request.source.size() + kSourceSuffix.size());
    text.append(kSourcePrefix).append(request.source).append(kSourceSuffix);
    JS::CompileOptions options(cx_);
    options.setFileAndLine(request.filename.c_str(), 0);
    JS::SourceText<mozilla::Utf8Unit> source;
    if (!source.init(cx_, text.data(), text.size(), JS::SourceOwnership::Borrowed)) {
      return take_exception();
    }
    JS::RootedValue fn(cx_);
    if (!JS::Evaluate(cx_, options, source, &fn)) return take_exception();
    // A source that closes the wrapper (`}); more code; (async function () {`) leaves a function
    // whose text is not the whole wrapper: refused rather than run in pieces.
    JS::RootedString fn_text(
        cx_, fn.isObject() && JS::IsCallable(&fn.toObject()) ? JS::ToString(cx_, fn) : nullptr);
    if (!fn_text) JS_ClearPendingException(cx_);
    if (!fn_text || to_utf8(cx_, fn_text) != std::string_view(text).substr(1, text.size() - 2)) {
      return script_error("SyntaxError",
                          "the source closes the function it is run in (unbalanced braces)");
    }

    JS::RootedValue result(cx_);
    if (!JS_CallFunctionValue(cx_, nullptr, fn, JS::HandleValueArray::empty(), &result)) {
      return take_exception();
    }
    if (auto failed = settle(&result)) return std::move(*failed);
    if (!rejected_.empty()) {
      // A promise the source created was rejected and nothing awaited or caught it.
      JS::RootedObject promise(cx_, rejected_.front()->get());
      JS::RootedValue reason(cx_, JS::GetPromiseResult(promise));
      if (!JS::SetSettledPromiseIsHandled(cx_, promise)) JS_ClearPendingException(cx_);
      JS::RootedObject stack(cx_);
      Outcome out = error_outcome(reason, stack);
      out.message = "a promise was rejected and nothing awaited it: " + out.message;
      return out;
    }

    Outcome out;
    if (!stringify(cx_, result, out.value_json)) return take_exception();
    // The globals' final values, by the names given (the source may have replaced them).
    JS::RootedObject final_values(cx_, JS_NewPlainObject(cx_));
    if (!final_values) return take_exception();
    for (std::size_t i = 0; i < names.length(); ++i) {
      if (!JS_GetPropertyById(cx_, global, names[i], &v) ||
          !JS_DefinePropertyById(cx_, final_values, names[i], v, JSPROP_ENUMERATE)) {
        return take_exception();
      }
    }
    JS::RootedValue final_value(cx_, JS::ObjectValue(*final_values));
    if (!stringify(cx_, final_value, out.globals_json)) return take_exception();
    return out;
  }

  /// An error of the evaluated source that no exception carries.
  Outcome script_error(const char* name, std::string message) {
    Outcome out;
    out.kind = Outcome::Kind::kThrown;
    out.name = name;
    out.message = std::move(message);
    out.file = request_->endpoint;
    return out;
  }

  /// Runs the job queue and due timers until `value` (a promise, or nothing to wait for) is
  /// settled; replaces it by the fulfilment value. An error outcome when it rejects, a timer
  /// callback throws, nothing is left to wait for, or time runs out.
  std::optional<Outcome> settle(JS::MutableHandleValue value) {
    for (;;) {
      ::js::RunJobs(cx_);
      if (interrupted()) return timeout();
      if (JS_IsExceptionPending(cx_)) return take_exception();
      if (failure_) {
        Outcome out = std::move(*failure_);
        failure_.reset();
        return out;
      }
      if (!value.isObject()) return std::nullopt;
      JS::RootedObject obj(cx_, &value.toObject());
      if (!JS::IsPromiseObject(obj)) return std::nullopt;
      switch (JS::GetPromiseState(obj)) {
        case JS::PromiseState::Fulfilled:
          value.set(JS::GetPromiseResult(obj));
          return std::nullopt;
        case JS::PromiseState::Rejected: {
          JS::RootedValue reason(cx_, JS::GetPromiseResult(obj));
          if (!JS::SetSettledPromiseIsHandled(cx_, obj)) JS_ClearPendingException(cx_);
          JS::RootedObject stack(cx_);
          return error_outcome(reason, stack);
        }
        case JS::PromiseState::Pending:
          break;
      }
      auto due = next_timer_due();
      if (!due) {
        Outcome out;
        out.kind = Outcome::Kind::kThrown;
        out.name = "Error";
        out.message =
            (request_->function.empty() ? std::string("the promise of the evaluated source")
                                        : "the promise returned by '" + request_->function + "'") +
            " never settled: nothing was left to wait for (no pending timer)";
        return out;
      }
      if (*due > deadline_) {
        std::this_thread::sleep_until(deadline_);
        return timeout();
      }
      std::this_thread::sleep_until(*due);
      run_due_timers();
    }
  }

  void run_due_timers() {
    const auto now = Clock::now();
    // Timers due now, in order of due time then creation; new timers wait for the next round.
    std::vector<Timer> due;
    for (auto it = timers_.begin(); it != timers_.end();) {
      if (it->due <= now) {
        due.push_back(std::move(*it));
        it = timers_.erase(it);
      } else {
        ++it;
      }
    }
    std::stable_sort(due.begin(), due.end(),
                     [](const Timer& a, const Timer& b) { return a.due < b.due; });
    for (auto& t : due) {
      JS::RootedValueVector args(cx_);
      for (auto& a : t.args) {
        if (!args.append(a->get())) return;
      }
      JS::RootedValue fn(cx_, t.callback->get());
      JS::RootedValue ignored(cx_);
      if (!JS_CallFunctionValue(cx_, nullptr, fn, args, &ignored)) {
        if (interrupted()) return;
        failure_ = take_exception();
        return;
      }
      ::js::RunJobs(cx_);
    }
  }

  Outcome timeout() {
    JS_ClearPendingException(cx_);
    Outcome out;
    if (watchdog_.over_memory()) {
      out.kind = Outcome::Kind::kOutOfMemory;
      out.message = "memory limit exceeded";
      return out;
    }
    out.kind = Outcome::Kind::kTimeout;
    out.message = "Handler timed out after " + std::to_string(request_->timeout.count()) + " ms";
    return out;
  }

  Outcome config_error_from_exception() {
    Outcome out = take_exception();
    if (out.kind == Outcome::Kind::kThrown) out.kind = Outcome::Kind::kConfig;
    return out;
  }

  /// The pending exception as an outcome (a timeout or the heap limit when none is pending).
  Outcome take_exception() {
    if (interrupted()) return timeout();
    if (JS_IsThrowingOutOfMemory(cx_) || !JS_IsExceptionPending(cx_)) {
      JS_ClearPendingException(cx_);
      Outcome out;
      out.kind = Outcome::Kind::kOutOfMemory;
      out.message = "memory limit exceeded";
      return out;
    }
    JS::ExceptionStack exn(cx_);
    if (!JS::StealPendingExceptionStack(cx_, &exn)) {
      JS_ClearPendingException(cx_);
      Outcome out;
      out.kind = Outcome::Kind::kThrown;
      out.message = "an exception was thrown but could not be read";
      return out;
    }
    JS::RootedValue value(cx_, exn.exception());
    JS::RootedObject stack(cx_, exn.stack());
    return error_outcome(value, stack);
  }

  Outcome error_outcome(JS::HandleValue value, JS::HandleObject saved_stack) {
    Outcome out;
    out.kind = Outcome::Kind::kThrown;
    if (value.isString() &&
        to_utf8(cx_, JS::RootedString(cx_, value.toString())) == "out of memory") {
      out.kind = Outcome::Kind::kOutOfMemory;
      out.message = "memory limit exceeded";
      return out;
    }
    JS::ExceptionStack exn(cx_, value, saved_stack);
    JS::ErrorReportBuilder report(cx_);
    if (report.init(cx_, exn, JS::ErrorReportBuilder::WithSideEffects)) {
      if (const char* text = report.toStringResult().c_str()) out.message = text;
      if (const JSErrorReport* r = report.report()) {
        if (r->filename != nullptr) out.file = r->filename;
        out.line = r->lineno;
        out.column = r->column + 1;
      }
    }
    JS_ClearPendingException(cx_);
    if (value.isObject()) {
      JS::RootedObject obj(cx_, &value.toObject());
      JS::RootedValue v(cx_);
      if (JS_GetProperty(cx_, obj, "stack", &v) && v.isString()) {
        out.stack = value_to_string(cx_, v);
      }
      if (JS_GetProperty(cx_, obj, "name", &v) && v.isString()) {
        out.name = value_to_string(cx_, v);
      }
      if (JS_GetProperty(cx_, obj, "message", &v) && v.isString() && out.message.empty()) {
        out.message = value_to_string(cx_, v);
      }
      JS_ClearPendingException(cx_);
    }
    if (out.stack.empty() && saved_stack) {
      JS::RootedString s(cx_);
      if (JS::BuildStackString(cx_, nullptr, saved_stack, &s)) out.stack = to_utf8(cx_, s);
      JS_ClearPendingException(cx_);
    }
    if (out.message.empty()) out.message = value_to_string(cx_, value);
    if (out.name == "PermissionDeniedError") out.kind = Outcome::Kind::kPermission;
    return out;
  }

  /// The compiled form of `rel`, from the cache or compiled now. `as_module`: force the goal
  /// (imports are always modules); nullopt: decided by is_es_module.
  CachedScript* compile(const std::string& rel, std::optional<bool> as_module) {
    if (auto ts = typescript_refusal(rel); !ts.empty()) {
      JS_ReportErrorUTF8(cx_, "%s", ts.c_str());
      return nullptr;
    }
    auto it = cache_.find(rel);
    if (it != cache_.end() && checked_.count(rel) != 0) return &it->second;
    const fs::path path = config_.service_dir / rel;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      JS_ReportErrorUTF8(cx_, "cannot load module '%s': %s", rel.c_str(), std::strerror(errno));
      return nullptr;
    }
    const std::int64_t mtime = std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
    if (it != cache_.end() && it->second.mtime_ns == mtime && it->second.size == st.st_size) {
      checked_.insert(rel);
      return &it->second;
    }
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    if (!in) {
      JS_ReportErrorUTF8(cx_, "cannot read module '%s'", rel.c_str());
      return nullptr;
    }
    const std::string source = buffer.str();
    CachedScript entry;
    entry.module = as_module.value_or(is_es_module(rel, source));
    entry.mtime_ns = mtime;
    entry.size = st.st_size;
    entry.filename = rel;
    JS::CompileOptions options(cx_);
    options.setFileAndLine(entry.filename.c_str(), 1);
    JS::SourceText<mozilla::Utf8Unit> text;
    if (!text.init(cx_, source.data(), source.size(), JS::SourceOwnership::Borrowed)) {
      return nullptr;
    }
    entry.stencil = entry.module ? JS::CompileModuleScriptToStencil(cx_, options, text)
                                 : JS::CompileGlobalScriptToStencil(cx_, options, text);
    if (!entry.stencil) return nullptr;
    auto [pos, inserted] = cache_.insert_or_assign(rel, std::move(entry));
    (void)inserted;
    checked_.insert(rel);
    return &pos->second;
  }

  bool define_globals(JS::HandleObject global) {
    static const JSFunctionSpec kConsole[] = {JS_FN("log", console_log, 0, JSPROP_ENUMERATE),
                                              JS_FN("info", console_info, 0, JSPROP_ENUMERATE),
                                              JS_FN("warn", console_warn, 0, JSPROP_ENUMERATE),
                                              JS_FN("error", console_error, 0, JSPROP_ENUMERATE),
                                              JS_FN("debug", console_debug, 0, JSPROP_ENUMERATE),
                                              JS_FS_END};
    static const JSFunctionSpec kGlobals[] = {
        JS_FN("setTimeout", set_timeout, 2, JSPROP_ENUMERATE),
        JS_FN("clearTimeout", clear_timeout, 1, JSPROP_ENUMERATE), JS_FS_END};
    JS::RootedObject console(cx_, JS_NewPlainObject(cx_));
    if (!console || !JS_DefineFunctions(cx_, console, kConsole)) return false;
    JS::RootedValue v(cx_, JS::ObjectValue(*console));
    return JS_DefineProperty(cx_, global, "console", v, JSPROP_ENUMERATE) &&
           JS_DefineFunctions(cx_, global, kGlobals);
  }

  /// An evaluation's `ctx`: readFile when the worker has file access, fetch when it has network
  /// access, nothing else (no writeFile, no publish).
  bool define_io(JS::HandleObject global) {
    static const JSFunctionSpec kRead[] = {JS_FN("readFile", ctx_read_file, 1, JSPROP_ENUMERATE),
                                           JS_FS_END};
    static const JSFunctionSpec kFetch[] = {JS_FN("fetch", ctx_fetch, 2, JSPROP_ENUMERATE),
                                            JS_FS_END};
    JS::RootedObject ctx(cx_, JS_NewPlainObject(cx_));
    if (!ctx) return false;
    if (config_.file_access && !JS_DefineFunctions(cx_, ctx, kRead)) return false;
    const bool network = std::holds_alternative<std::vector<std::string>>(config_.network) ||
                         std::get_if<bool>(&config_.network) == nullptr ||
                         std::get<bool>(config_.network);
    if (network && !JS_DefineFunctions(cx_, ctx, kFetch)) return false;
    JS::RootedValue v(cx_, JS::ObjectValue(*ctx));
    return JS_DefineProperty(cx_, global, "ctx", v, JSPROP_ENUMERATE);
  }

  JSObject* make_ctx(JS::HandleValue input) {
    static const JSFunctionSpec kCtx[] = {JS_FN("log", ctx_log, 0, JSPROP_ENUMERATE),
                                          JS_FN("readFile", ctx_read_file, 1, JSPROP_ENUMERATE),
                                          JS_FN("writeFile", ctx_write_file, 2, JSPROP_ENUMERATE),
                                          JS_FN("publish", ctx_publish, 2, JSPROP_ENUMERATE),
                                          JS_FN("fetch", ctx_fetch, 2, JSPROP_ENUMERATE),
                                          JS_FS_END};
    static const JSFunctionSpec kInvoke[] = {JS_FN("invoke", ctx_invoke, 3, JSPROP_ENUMERATE),
                                             JS_FS_END};
    JS::RootedObject ctx(cx_, JS_NewPlainObject(cx_));
    if (!ctx || !JS_DefineFunctions(cx_, ctx, kCtx)) return nullptr;
    if (sink_ != nullptr && sink_->invoke && !JS_DefineFunctions(cx_, ctx, kInvoke)) return nullptr;
    JS::RootedValue v(cx_, input);
    if (!JS_DefineProperty(cx_, ctx, "input", v, JSPROP_ENUMERATE)) return nullptr;
    for (auto [name, text] :
         {std::pair<const char*, const std::string*>{"endpoint", &request_->endpoint},
          {"service", &config_.service}}) {
      JS::RootedString s(cx_, new_string(cx_, *text));
      if (!s) return nullptr;
      v.setString(s);
      if (!JS_DefineProperty(cx_, ctx, name, v, JSPROP_ENUMERATE | JSPROP_READONLY)) return nullptr;
    }
    return ctx;
  }

  // --- Natives ---------------------------------------------------------------------------------

  static std::string join_args(JSContext* cx, const JS::CallArgs& args) {
    std::string out;
    for (unsigned i = 0; i < args.length(); ++i) {
      if (i > 0) out += ' ';
      if (args[i].isString() || args[i].isUndefined() || args[i].isSymbol() ||
          (args[i].isObject() && JS::IsCallable(&args[i].toObject()))) {
        out += value_to_string(cx, args[i]);
        continue;
      }
      std::string json;
      if (stringify(cx, args[i], json)) {
        out += json;
      } else {
        JS_ClearPendingException(cx);
        out += value_to_string(cx, args[i]);
      }
    }
    return out;
  }

  static bool log_at(JSContext* cx, unsigned argc, JS::Value* vp, std::string_view level) {
    JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
    auto* e = engine_of(cx);
    if (e->sink_ != nullptr && e->sink_->log && e->log_allowed()) {
      std::string text = join_args(cx, args);
      if (text.size() > kLogLineBytes) {
        text.resize(kLogLineBytes);
        text += "... (" + std::to_string(kLogLineBytes) + " bytes shown)";
      }
      e->log_bytes_ += text.size();
      e->sink_->log(level, text);
    }
    args.rval().setUndefined();
    return true;
  }

  /// Whether one more log line of this call may reach the daemon's log: at most kLogLinesPerCall
  /// lines and kLogBytesPerCall bytes per call, and per endpoint a rate of kLogLinesPerSecond
  /// with bursts of kLogLinesPerCall (a token bucket, per worker). A refused line is counted and
  /// reported once when the call ends.
  bool log_allowed() {
    const auto now = Clock::now();
    auto& bucket = log_buckets_[request_->endpoint];
    if (bucket.last == Clock::time_point{}) {
      bucket.tokens = kLogLinesPerCall;
    } else {
      const double seconds = std::chrono::duration<double>(now - bucket.last).count();
      bucket.tokens =
          std::min<double>(kLogLinesPerCall, bucket.tokens + seconds * kLogLinesPerSecond);
    }
    bucket.last = now;
    if (log_lines_ >= kLogLinesPerCall || log_bytes_ >= kLogBytesPerCall || bucket.tokens < 1) {
      ++log_suppressed_;
      return false;
    }
    bucket.tokens -= 1;
    ++log_lines_;
    return true;
  }

  /// The one line that says how many were left out, at the end of a call that hit a limit.
  void report_suppressed_logs() {
    if (log_suppressed_ > 0 && sink_ != nullptr && sink_->log) {
      sink_->log("warn", std::to_string(log_suppressed_) +
                             " log lines suppressed (limits: " + std::to_string(kLogLinesPerCall) +
                             " lines or " + std::to_string(kLogBytesPerCall) + " bytes a call, " +
                             std::to_string(static_cast<int>(kLogLinesPerSecond)) +
                             " lines a second per endpoint)");
    }
    log_lines_ = 0;
    log_bytes_ = 0;
    log_suppressed_ = 0;
  }
  static bool console_log(JSContext* cx, unsigned argc, JS::Value* vp) {
    return log_at(cx, argc, vp, "info");
  }
  static bool console_info(JSContext* cx, unsigned argc, JS::Value* vp) {
    return log_at(cx, argc, vp, "info");
  }
  static bool console_warn(JSContext* cx, unsigned argc, JS::Value* vp) {
    return log_at(cx, argc, vp, "warn");
  }
  static bool console_error(JSContext* cx, unsigned argc, JS::Value* vp) {
    return log_at(cx, argc, vp, "error");
  }
  static bool console_debug(JSContext* cx, unsigned argc, JS::Value* vp) {
    return log_at(cx, argc, vp, "debug");
  }
  static bool ctx_log(JSContext* cx, unsigned argc, JS::Value* vp) {
    return log_at(cx, argc, vp, "info");
  }

  static bool set_timeout(JSContext* cx, unsigned argc, JS::Value* vp) {
    JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
    auto* e = engine_of(cx);
    if (args.length() < 1 || !args[0].isObject() || !JS::IsCallable(&args[0].toObject())) {
      e->throw_error("TypeError", "setTimeout: the first argument must be a function");
      return false;
    }
    double ms = 0;
    if (args.length() > 1 && !JS::ToNumber(cx, args[1], &ms)) return false;
    if (!(ms > 0)) ms = 0;
    ms = std::min(ms, 1e9);
    const auto id =
        e->add_timer(args[0], std::chrono::milliseconds(static_cast<long>(ms)), args, 2);
    args.rval().setNumber(id);
    return true;
  }

  static bool clear_timeout(JSContext* cx, unsigned argc, JS::Value* vp) {
    JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
    double id = 0;
    if (args.length() > 0 && args[0].isNumber() && JS::ToNumber(cx, args[0], &id) && id > 0) {
      engine_of(cx)->clear_timer(static_cast<std::uint32_t>(id));
    }
    args.rval().setUndefined();
    return true;
  }

  static bool string_arg(JSContext* cx, const JS::CallArgs& args, unsigned i, const char* what,
                         std::string& out) {
    if (args.length() <= i || !args[i].isString()) {
      engine_of(cx)->throw_error("TypeError", std::string(what) + " must be a string");
      return false;
    }
    JS::RootedString s(cx, args[i].toString());
    out = to_utf8(cx, s);
    return true;
  }

  static bool ctx_read_file(JSContext* cx, unsigned argc, JS::Value* vp) {
    JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
    auto* e = engine_of(cx);
    std::string requested;
    if (!string_arg(cx, args, 0, "ctx.readFile: the path", requested)) return false;
    auto path = e->data_path(requested, false);
    if (!path) return false;
    std::ifstream in(*path, std::ios::binary);
    if (!in) {
      e->throw_error("Error",
                     "ctx.readFile: cannot open '" + requested + "': " + std::strerror(errno),
                     errno == ENOENT   ? "ENOENT"
                     : errno == EACCES ? "EACCES"
                                       : "EIO");
      return false;
    }
    std::string content;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      content.append(buf, static_cast<std::size_t>(in.gcount()));
      if (content.size() > e->config_.max_file_bytes) {
        e->throw_error("Error", "ctx.readFile: '" + requested + "' is larger than " +
                                    std::to_string(e->config_.max_file_bytes) + " bytes");
        return false;
      }
    }
    JS::RootedString s(cx, new_string(cx, content));
    if (!s) return false;
    args.rval().setString(s);
    return true;
  }

  static bool ctx_write_file(JSContext* cx, unsigned argc, JS::Value* vp) {
    JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
    auto* e = engine_of(cx);
    std::string requested, content;
    if (!string_arg(cx, args, 0, "ctx.writeFile: the path", requested) ||
        !string_arg(cx, args, 1, "ctx.writeFile: the content", content)) {
      return false;
    }
    auto path = e->data_path(requested, true);
    if (!path) return false;
    // Past RLIMIT_FSIZE write(2) must fail with EFBIG (reported like a full disk), not kill the
    // worker with SIGXFSZ.
    static const bool xfsz_ignored = (std::signal(SIGXFSZ, SIG_IGN), true);
    (void)xfsz_ignored;
    e->remove_stale_temporaries(*path);
    // Atomic: a temporary file beside the target, fsynced, renamed over it. A worker killed at
    // any moment, or a full disk, leaves the old content or the new one, never half a file.
    auto written = write_file_atomic(*path, content);
    int err = 0;
    if (!written.ok()) {
      err = atomic_write_errno(written.error());
      // A fileAccess pattern that names one existing file gives the jail a rule on that file
      // alone: nothing may be created beside it, so it can only be rewritten in place.
      if (err == EACCES || err == EPERM) {
        const int in_place = write_in_place(*path, content);
        err = in_place == ENOENT ? err : in_place;
      }
    }
    if (err != 0) {
      std::string message = "ctx.writeFile: cannot write '" + requested + "': ";
      if (is_disk_full_errno(err)) {
        message += std::string("the disk is full or the file size limit is reached (") +
                   std::strerror(err) + "); the file keeps its old content";
      } else {
        message += std::strerror(err);
      }
      e->throw_error("Error", message, errno_name(err));
      return false;
    }
    args.rval().setUndefined();
    return true;
  }

  /// Removes the temporary files a killed writer of `target` left beside it
  /// (`.name.hearth-tmp-*`), when this call holds its folder's exclusive lock (a mutation): no
  /// other call can be writing one then.
  void remove_stale_temporaries(const fs::path& target) {
    if (request_ == nullptr || !request_->mutation) return;
    const fs::path folder = target.parent_path();
    if (locks_.count(folder.string()) == 0) return;
    const std::string prefix = "." + target.filename().string() + std::string(kAtomicTempMarker);
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0) {
        std::error_code ignored;
        fs::remove(it->path(), ignored);
      }
    }
  }

  /// Rewrites `path` in place, for files the jail lets the worker write but not replace. The
  /// space is reserved first (fallocate), so a full disk fails before a byte changes; the new
  /// content is written over the old and the file cut to its length after. Returns 0 or errno.
  static int write_in_place(const fs::path& path, const std::string& content) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return errno;
    int err = 0;
    if (!content.empty() &&
        ::fallocate(fd.get(), FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(content.size())) != 0 &&
        errno != EOPNOTSUPP && errno != ENOSYS) {
      err = errno;
    }
    std::size_t done = 0;
    while (err == 0 && done < content.size()) {
      const ssize_t n = ::pwrite(fd.get(), content.data() + done, content.size() - done,
                                 static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        err = n < 0 ? errno : ENOSPC;
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    if (err == 0 && ::ftruncate(fd.get(), static_cast<off_t>(content.size())) != 0) err = errno;
    if (err == 0 && ::fsync(fd.get()) != 0) err = errno;
    if (const int close_err = fd.close(); close_err != 0 && err == 0) err = close_err;
    return err;
  }

  static bool ctx_publish(JSContext* cx, unsigned argc, JS::Value* vp) {
    JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
    auto* e = engine_of(cx);
    std::string subscription;
    if (!string_arg(cx, args, 0, "ctx.publish: the subscription", subscription)) return false;
    const auto& subs = e->config_.subscriptions;
    if (std::find(subs.begin(), subs.end(), subscription) == subs.end()) {
      std::string known;
      for (const auto& s : subs) known += (known.empty() ? "" : ", ") + s;
      e->throw_error("TypeError", "ctx.publish: '" + subscription +
                                      "' is not a subscription endpoint of this service" +
                                      (known.empty() ? " (it has none)" : " (" + known + ")"));
      return false;
    }
    std::string data = "null";
    if (args.length() > 1 && !stringify(cx, args[1], data)) return false;
    if (e->sink_ != nullptr && e->sink_->publish) e->sink_->publish(subscription, data);
    args.rval().setUndefined();
    return true;
  }

  static bool response_text(JSContext* cx, unsigned argc, JS::Value* vp, bool as_json) {
    JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
    JS::RootedObject self(cx, JS::ToObject(cx, args.thisv()));
    if (!self) return false;
    JS::RootedValue body(cx);
    if (!JS_GetProperty(cx, self, "_body", &body)) return false;
    JS::RootedObject promise(cx, JS::NewPromiseObject(cx, nullptr));
    if (!promise) return false;
    JS::RootedValue result(cx, body.isString() ? body : JS::UndefinedValue());
    bool ok = true;
    if (as_json) {
      JS::RootedString s(cx, body.isString() ? body.toString() : JS_NewStringCopyZ(cx, ""));
      ok = s && JS_ParseJSON(cx, s, &result);
    }
    if (ok) {
      if (!JS::ResolvePromise(cx, promise, result)) return false;
    } else {
      JS::RootedValue reason(cx);
      if (!JS_GetPendingException(cx, &reason)) return false;
      JS_ClearPendingException(cx);
      if (!JS::RejectPromise(cx, promise, reason)) return false;
    }
    args.rval().setObject(*promise);
    return true;
  }
  static bool response_text_native(JSContext* cx, unsigned argc, JS::Value* vp) {
    return response_text(cx, argc, vp, false);
  }
  static bool response_json_native(JSContext* cx, unsigned argc, JS::Value* vp) {
    return response_text(cx, argc, vp, true);
  }

  /// ctx.invoke(capability, method, params): a Promise of what the host's capability bridge
  /// answered (an Agent App worker's way to the host), settled before it returns. A denial
  /// rejects with a PermissionDeniedError (uncaught, the call fails with -32001); another error
  /// with an Error whose `code` and `data` are the bridge's.
  static bool ctx_invoke(JSContext* cx, unsigned argc, JS::Value* vp) {
    JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
    auto* e = engine_of(cx);
    if (e->sink_ == nullptr || !e->sink_->invoke) {
      e->throw_error("TypeError", "ctx.invoke is not available to this call");
      return false;
    }
    std::string capability;
    std::string method;
    if (!string_arg(cx, args, 0, "ctx.invoke: the capability", capability) ||
        !string_arg(cx, args, 1, "ctx.invoke: the method", method)) {
      return false;
    }
    JS::RootedObject call(cx, JS_NewPlainObject(cx));
    if (!call) return false;
    JS::RootedValue v(cx, args.get(0));
    if (!JS_DefineProperty(cx, call, "capability", v, JSPROP_ENUMERATE)) return false;
    v.set(args.get(1));
    if (!JS_DefineProperty(cx, call, "method", v, JSPROP_ENUMERATE)) return false;
    if (args.length() > 2 && !args[2].isNullOrUndefined()) {
      if (!args[2].isObject()) {
        e->throw_error("TypeError", "ctx.invoke: params must be an object");
        return false;
      }
      v.set(args[2]);
      if (!JS_DefineProperty(cx, call, "params", v, JSPROP_ENUMERATE)) return false;
    }
    std::string call_json;
    v.setObject(*call);
    if (!stringify(cx, v, call_json)) return false;
    const auto answer = e->sink_->invoke(call_json);
    JS::RootedValue parsed(cx);
    if (!answer || !parse_json(cx, *answer, &parsed) || !parsed.isObject()) {
      JS_ClearPendingException(cx);
      e->throw_error("Error", "ctx.invoke: the host did not answer");
      return false;
    }
    JS::RootedObject reply(cx, &parsed.toObject());
    JS::RootedValue result(cx);
    bool has_result = false;
    if (!JS_HasProperty(cx, reply, "result", &has_result)) return false;
    JS::RootedObject promise(cx, JS::NewPromiseObject(cx, nullptr));
    if (!promise) return false;
    if (has_result) {
      if (!JS_GetProperty(cx, reply, "result", &result) ||
          !JS::ResolvePromise(cx, promise, result)) {
        return false;
      }
      args.rval().setObject(*promise);
      return true;
    }
    JS::RootedValue error(cx);
    JS::RootedValue code(cx);
    JS::RootedValue message(cx);
    JS::RootedValue data(cx);
    if (!JS_GetProperty(cx, reply, "error", &error)) return false;
    if (error.isObject()) {
      JS::RootedObject eo(cx, &error.toObject());
      if (!JS_GetProperty(cx, eo, "code", &code) || !JS_GetProperty(cx, eo, "message", &message) ||
          !JS_GetProperty(cx, eo, "data", &data)) {
        return false;
      }
    }
    const std::string text =
        "ctx.invoke(" + capability + "." + method +
        "): " + (message.isString() ? value_to_string(cx, message) : std::string("refused"));
    if (code.isInt32() && code.toInt32() == -32001) {
      e->throw_permission(text);
    } else {
      e->throw_error("Error", text);
    }
    JS::RootedValue reason(cx);
    if (!JS_GetPendingException(cx, &reason)) return false;
    JS_ClearPendingException(cx);
    if (reason.isObject()) {
      JS::RootedObject ro(cx, &reason.toObject());
      // The bridge's own code and data (a denial's stage and reason) for the code to read.
      if (!JS_DefineProperty(cx, ro, "rpcCode", code, JSPROP_ENUMERATE) ||
          !JS_DefineProperty(cx, ro, "data", data, JSPROP_ENUMERATE)) {
        return false;
      }
    }
    if (!JS::RejectPromise(cx, promise, reason)) return false;
    args.rval().setObject(*promise);
    return true;
  }

  /// ctx.fetch(url, {method, headers, body, redirect}): a Promise of {status, ok, statusText,
  /// url, headers, text(), json()}. The request runs synchronously (a worker runs one call at a
  /// time), and gives up a little before the call's own time limit (fetch_time_limit), so that
  /// the handler can catch the error.
  static bool ctx_fetch(JSContext* cx, unsigned argc, JS::Value* vp) {
    JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
    auto* e = engine_of(cx);
    FetchRequest request;
    if (!string_arg(cx, args, 0, "ctx.fetch: the URL", request.url)) return false;
    if (args.length() > 1 && args[1].isObject()) {
      JS::RootedObject init(cx, &args[1].toObject());
      JS::RootedValue v(cx);
      if (!JS_GetProperty(cx, init, "method", &v)) return false;
      if (v.isString()) request.method = value_to_string(cx, v);
      if (!JS_GetProperty(cx, init, "body", &v)) return false;
      if (v.isString()) {
        request.body = value_to_string(cx, v);
      } else if (!v.isNullOrUndefined()) {
        e->throw_error("TypeError", "ctx.fetch: body must be a string (use JSON.stringify)");
        return false;
      }
      if (!JS_GetProperty(cx, init, "redirect", &v)) return false;
      if (!v.isUndefined()) {
        const std::string mode = v.isString() ? value_to_string(cx, v) : std::string();
        if (mode == "follow") {
          request.redirect = RedirectMode::kFollow;
        } else if (mode == "error") {
          request.redirect = RedirectMode::kError;
        } else if (mode == "manual") {
          request.redirect = RedirectMode::kManual;
        } else {
          e->throw_error("TypeError",
                         R"(ctx.fetch: redirect must be "follow", "error" or "manual")");
          return false;
        }
      }
      if (!JS_GetProperty(cx, init, "headers", &v)) return false;
      if (v.isObject()) {
        JS::RootedObject headers(cx, &v.toObject());
        JS::Rooted<JS::IdVector> ids(cx, JS::IdVector(cx));
        if (!JS_Enumerate(cx, headers, &ids)) return false;
        for (std::size_t i = 0; i < ids.length(); ++i) {
          JS::RootedValue key(cx), value(cx);
          if (!JS_IdToValue(cx, ids[i], &key) || !JS_GetPropertyById(cx, headers, ids[i], &value)) {
            return false;
          }
          request.headers.emplace_back(value_to_string(cx, key), value_to_string(cx, value));
        }
      }
    }
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(e->deadline_ - Clock::now());
    request.timeout = fetch_time_limit(std::max(std::chrono::milliseconds(1), remaining));
    request.max_body = e->config_.max_file_bytes;

    EgressProxy proxy;
    if (std::holds_alternative<std::vector<std::string>>(e->config_.network)) {
      proxy.host = e->config_.proxy_host;
      proxy.port = e->config_.proxy_port;
    }
    auto response = e->network_.ok()
                        ? fetch(request, e->network_.value(), proxy)
                        : Result<FetchResponse>(Error::make(ErrorCode::kPermissionDenied,
                                                            e->network_.error().message));
    if (!response.ok()) {
      const auto& err = response.error();
      if (err.code == ErrorCode::kPermissionDenied) {
        e->throw_permission("ctx.fetch: " + err.message);
      } else {
        e->throw_error("TypeError", "ctx.fetch: " + err.message);
      }
      // A rejected promise, as fetch() does, rather than a synchronous throw.
      JS::RootedValue reason(cx);
      if (!JS_GetPendingException(cx, &reason)) return false;
      JS_ClearPendingException(cx);
      JS::RootedObject promise(cx, JS::NewPromiseObject(cx, nullptr));
      if (!promise || !JS::RejectPromise(cx, promise, reason)) return false;
      args.rval().setObject(*promise);
      return true;
    }
    const FetchResponse& r = response.value();
    static const JSFunctionSpec kResponse[] = {JS_FN("text", response_text_native, 0, 0),
                                               JS_FN("json", response_json_native, 0, 0),
                                               JS_FS_END};
    JS::RootedObject obj(cx, JS_NewPlainObject(cx));
    JS::RootedObject headers(cx, JS_NewPlainObject(cx));
    if (!obj || !headers || !JS_DefineFunctions(cx, obj, kResponse)) return false;
    JS::RootedValue v(cx);
    for (const auto& [name, value] : r.headers) {
      JS::RootedString s(cx, new_string(cx, value));
      if (!s) return false;
      v.setString(s);
      if (!JS_DefineProperty(cx, headers, name.c_str(), v, JSPROP_ENUMERATE)) return false;
    }
    v.setObject(*headers);
    if (!JS_DefineProperty(cx, obj, "headers", v, JSPROP_ENUMERATE)) return false;
    v.setInt32(r.status);
    if (!JS_DefineProperty(cx, obj, "status", v, JSPROP_ENUMERATE)) return false;
    v.setBoolean(r.status >= 200 && r.status < 300);
    if (!JS_DefineProperty(cx, obj, "ok", v, JSPROP_ENUMERATE)) return false;
    for (auto [name, text] :
         {std::pair<const char*, const std::string*>{"statusText", &r.status_text},
          {"url", &r.url},
          {"_body", &r.body}}) {
      JS::RootedString s(cx, new_string(cx, *text));
      if (!s) return false;
      v.setString(s);
      const unsigned attrs = std::string_view(name) == "_body" ? 0 : JSPROP_ENUMERATE;
      if (!JS_DefineProperty(cx, obj, name, v, attrs)) return false;
    }
    JS::RootedObject promise(cx, JS::NewPromiseObject(cx, nullptr));
    v.setObject(*obj);
    if (!promise || !JS::ResolvePromise(cx, promise, v)) return false;
    args.rval().setObject(*promise);
    return true;
  }

  WorkerConfig config_;
  Result<egress::NetworkPolicy> network_;  ///< config_.network, parsed
  JSContext* cx_;
  Watchdog watchdog_;
  std::uint64_t baseline_;  ///< resident bytes once the engine is up
  jail::GlobSet globs_;
  std::map<std::string, CachedScript> cache_;
  /// The files whose freshness compile() has checked (a stat) since the current request began:
  /// a request reads each file once, whatever checks it (the prepared realm's, the loader's),
  /// and the realm prepared right after it takes the request's check. The next request checks
  /// again.
  std::set<std::string> checked_;
  using ModuleMap = std::map<std::string, std::unique_ptr<JS::PersistentRootedObject>>;
  ModuleMap modules_;                  ///< the current call's module instances
  ModuleMap* module_map_ = &modules_;  ///< where load_module finds and keeps instances
  /// A realm made while the worker was idle, for the next call of `module` (prepare()).
  struct Prepared {
    std::string module;
    std::unique_ptr<JS::PersistentRootedObject> global;
    ModuleMap modules;  ///< the module graph, instantiated and linked in `global`'s realm
    /// Each file's compiled form when it was made (held, so that a recompiled file is told
    /// apart by its stencil even if the old one's address were reused).
    std::vector<std::pair<std::string, RefPtr<JS::Stencil>>> sources;
  };
  std::unique_ptr<Prepared> prepared_;
  bool last_prepared_used_ = true;
  /// A realm kept between calls (isolation "worker"), by module.
  struct Kept {
    std::unique_ptr<JS::PersistentRootedObject> global;
    std::unique_ptr<JS::PersistentRootedObject> exports;  ///< may hold null (a script)
    bool is_module = false;
    ModuleMap modules;  ///< its module graph's instances
  };
  std::map<std::string, std::unique_ptr<Kept>> kept_;
  std::map<std::string, Fd> locks_;  ///< files locked by the current call, by real path
  std::vector<Timer> timers_;
  std::uint32_t next_timer_ = 1;
  std::optional<Outcome> failure_;
  bool track_rejections_ = false;                                      ///< during an evaluation
  std::vector<std::unique_ptr<JS::PersistentRootedObject>> rejected_;  ///< not handled (yet)
  const CallRequest* request_ = nullptr;
  const CallSink* sink_ = nullptr;
  // Handler logs reach the daemon's log: bounded so that a loop of console.log cannot fill the
  // disk (200,000 lines once made a 51 MB daemon log).
  static constexpr std::size_t kLogLinesPerCall = 1000;
  static constexpr std::size_t kLogBytesPerCall = 1 << 20;
  static constexpr std::size_t kLogLineBytes = std::size_t{16} * 1024;
  static constexpr double kLogLinesPerSecond = 100;
  struct LogBucket {
    double tokens = 0;
    Clock::time_point last{};
  };
  std::map<std::string, LogBucket> log_buckets_;
  std::size_t log_lines_ = 0;
  std::size_t log_bytes_ = 0;
  std::size_t log_suppressed_ = 0;
  Clock::time_point deadline_{};
  JS::PersistentRootedObject anchor_;  ///< the first global, whose compartment every call shares
  int calls_since_gc_ = 0;
};

bool interrupt_callback(JSContext* cx) {
  auto* e = engine_of(cx);
  return e == nullptr || !e->interrupted();
}

JSObject* module_resolve_hook(JSContext* cx, JS::HandleValue referencing_private,
                              JS::HandleObject module_request) {
  auto* e = engine_of(cx);
  JS::RootedString spec(cx, JS::GetModuleRequestSpecifier(cx, module_request));
  if (!spec) return nullptr;
  std::string referrer;
  if (referencing_private.isString()) {
    JS::RootedString r(cx, referencing_private.toString());
    referrer = to_utf8(cx, r);
  }
  return e->import_module(referrer, to_utf8(cx, spec));
}

}  // namespace

std::unique_ptr<Engine> Engine::create(WorkerConfig config, std::string& error) {
  static bool initialised = JS_Init();
  if (!initialised) {
    error = "JS_Init failed";
    return nullptr;
  }
  // The heap limit: the endpoint's maxMemory, else a generous default (the engine's own default of
  // 32 MiB is too small for real data).
  const std::uint64_t heap = config.max_heap > 0 ? config.max_heap : kDefaultHeap;
  JSContext* cx =
      JS_NewContext(static_cast<std::uint32_t>(std::min<std::uint64_t>(heap, 0xFFFFFFFFu)));
  if (cx == nullptr) {
    error = "cannot create a JavaScript context (JS_NewContext)";
    return nullptr;
  }
  // Promise jobs run on our own loop (settle()); must precede InitSelfHostedCode.
  if (!::js::UseInternalJobQueues(cx) || !JS::InitSelfHostedCode(cx)) {
    error = "cannot initialise the JavaScript engine (self-hosted code)";
    return nullptr;
  }
  auto engine = std::make_unique<SpiderMonkeyEngine>(std::move(config), cx);
  JS_SetContextPrivate(cx, engine.get());
  JS_AddInterruptCallback(cx, interrupt_callback);
  JS::SetReduceMicrosecondTimePrecisionCallback(pinned_clock);
  JS::SetPromiseRejectionTrackerCallback(
      cx,
      [](JSContext*, bool, JS::HandleObject promise, JS::PromiseRejectionHandlingState state,
         void* data) { static_cast<SpiderMonkeyEngine*>(data)->track_rejection(promise, state); },
      engine.get());
  JS::SetModuleResolveHook(JS_GetRuntime(cx), module_resolve_hook);
  return engine;
}

}  // namespace hearth::js
