#include "jsworker/serve.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "js/engine.hpp"
#include "js/frame.hpp"
#include "json/json.hpp"
#include "jsworker/protocol.hpp"

namespace hearth::jsworker {

namespace {

using js::Outcome;

int g_out = -1;                       ///< the frame channel (the original stdout)
js::FrameReader* g_reader = nullptr;  ///< the daemon's frames (stdin)

void write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(g_out, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      std::_Exit(0);  // the daemon is gone: nothing left to serve
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void send(const FromWorker& message) {
  write_all(frame(encode(message)));
}

/// The next frame on stdin, nullopt at EOF. A malformed stream ends the worker.
std::optional<std::string> read_frame(js::FrameReader& reader) {
  for (;;) {
    if (auto next = reader.next()) return next;
    if (reader.failed()) {
      std::fputs("hearth-js-worker: oversized frame from the daemon\n", stderr);
      std::_Exit(2);
    }
    char buf[65536];
    const ssize_t n = ::read(0, buf, sizeof buf);
    if (n == 0) return std::nullopt;
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    reader.feed(std::string_view(buf, static_cast<std::size_t>(n)));
  }
}

/// The daemon's next request, or the reason it cannot be read. Read with the daemon's parser, so
/// that every double reaches the engine as the daemon wrote it (Boost.JSON 1.81 alone misreads
/// some in their last bit).
Result<ToWorker> decode_frame(const std::string& payload) {
  auto v = json::parse_text(payload);
  if (!v.ok()) return Error::make(ErrorCode::kParseError, "not JSON: " + v.error().message);
  return decode_to_worker(v.value());
}

/// JSON.stringify's text: integers JavaScript writes in full beyond 64 bits (1e20 as
/// 100000000000000000000) are read as doubles, not refused.
json::value parse_engine_json(std::string_view text) {
  auto v = json::parse_text(text, json::ParseLimits{.clamp_numbers = true});
  return v.ok() ? std::move(v).value() : json::value(nullptr);
}

js::WorkerConfig engine_config(const Init& init) {
  js::WorkerConfig config;
  config.service_dir = init.service_dir;
  config.service = init.service;
  config.file_access = init.file_access;
  config.network = init.network;
  if (std::holds_alternative<std::vector<std::string>>(init.network)) {
    // The jail's egress proxy, when there is one (not under --insecure-no-sandbox).
    if (const char* proxy = std::getenv("HTTP_PROXY"); proxy != nullptr) {
      const std::string p(proxy);
      const auto colon = p.rfind(':');
      if (colon != std::string::npos) {
        config.proxy_port = static_cast<std::uint16_t>(std::atoi(p.c_str() + colon + 1));
      }
    }
  }
  config.max_heap = init.max_heap.value_or(0);
  config.subscriptions = init.subscriptions;
  return config;
}

FailureKind failure_kind(Outcome::Kind kind) {
  switch (kind) {
    case Outcome::Kind::kOk:
    case Outcome::Kind::kThrown:
      return FailureKind::kThrown;
    case Outcome::Kind::kPermission:
      return FailureKind::kPermission;
    case Outcome::Kind::kTimeout:
      return FailureKind::kTimeout;
    case Outcome::Kind::kOutOfMemory:
      return FailureKind::kOutOfMemory;
    case Outcome::Kind::kConfig:
      return FailureKind::kConfig;
  }
  return FailureKind::kThrown;
}

/// A request's side output, as frames about request `id`.
js::CallSink sink_for(std::uint64_t id) {
  js::CallSink sink;
  sink.log = [id](std::string_view level, std::string_view text) {
    send(Log{id, parse_log_level(level).value_or(LogLevel::kInfo), std::string(text)});
  };
  sink.publish = [id](std::string_view subscription, std::string_view data) {
    send(Publish{id, std::string(subscription), parse_engine_json(data)});
  };
  return sink;
}

/// Decodes one frame from the daemon.
Result<ToWorker> decode_frame(const std::string& payload);

/// ctx.invoke of request `id`: the call goes to the daemon as a HostCall, and the worker waits
/// for its HostAnswer (the daemon sends nothing else to a worker while its request runs).
std::optional<std::string> host_call(std::uint64_t id, std::string_view call_json) {
  json::value call = parse_engine_json(call_json);
  if (!call.is_object() || g_reader == nullptr) return std::nullopt;
  send(HostCall{id, std::move(call.as_object())});
  auto payload = read_frame(*g_reader);
  if (!payload) std::_Exit(0);  // the daemon is gone
  auto message = decode_frame(*payload);
  const auto* answer = message.ok() ? std::get_if<HostAnswer>(&message.value()) : nullptr;
  if (answer == nullptr || answer->id != id) {
    std::fputs("hearth-js-worker: malformed frame: expected the answer to a host call\n", stderr);
    std::_Exit(2);
  }
  return json::serialize(answer->answer);
}

/// Sends the answer of request `id`, saying whether the engine collects garbage in full next
/// (returned: after_answer() says when that is over); ends the worker after the heap limit, whose
/// engine state is not trusted (the daemon starts another).
bool answer(const js::Engine& engine, std::uint64_t id, const Outcome& out, bool evaluation) {
  const bool collecting = engine.full_collection_due();
  if (out.kind == Outcome::Kind::kOk) {
    // The engine's JSON.stringify output: spliced in as it is, not parsed again.
    write_all(frame(encode_returned(
        id, out.value_json,
        evaluation ? std::optional<std::string_view>(out.globals_json) : std::nullopt,
        collecting)));
    return collecting;
  }
  send(Failed{id, failure_kind(out.kind), out.message, out.name, out.stack, out.file, out.line,
              out.column, collecting});
  if (out.kind == Outcome::Kind::kOutOfMemory) std::_Exit(0);
  return collecting;
}

/// The housekeeping after an answer; the daemon hears when the full collection the answer
/// announced is over.
void after_answer(js::Engine& engine, bool announced) {
  engine.after_answer();
  if (announced) send(Collected{});
}

/// The time request `id` may run from now: its timeout, cut to what is left before its deadline
/// (it may have waited in this worker's input behind another request). When nothing is left the
/// request is answered as timed out here, and nullopt says that nothing of it is to run.
std::optional<std::chrono::milliseconds> time_left(std::uint64_t id,
                                                   std::chrono::milliseconds timeout,
                                                   std::optional<std::int64_t> deadline_ns) {
  if (!deadline_ns) return timeout;
  const auto left =
      std::chrono::nanoseconds(*deadline_ns) - std::chrono::steady_clock::now().time_since_epoch();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left);
  if (ms.count() > 0) return std::min(timeout, ms);
  Failed late;
  late.id = id;
  late.kind = FailureKind::kTimeout;
  late.message = "Handler timed out after " + std::to_string(timeout.count()) +
                 " ms (its time ran out before it began)";
  send(late);
  return std::nullopt;
}

// Each run() first tells the daemon the request began: a worker that dies before that is known
// not to have run any of it, and the request is given to another worker. Each returns whether
// its answer announced a full collection.

bool run(js::Engine& engine, const CallFunction& call) {
  const auto timeout = time_left(call.id, call.timeout, call.deadline_ns);
  if (!timeout) return false;
  send(Started{call.id});
  js::CallRequest request;
  request.id = call.id;
  request.module = call.module;
  request.function = call.function;
  request.endpoint = call.endpoint;
  request.input_json = json::serialize(call.input);
  request.mutation = call.mutation;
  request.keep_state = call.keep_state;
  request.timeout = *timeout;
  js::CallSink sink = sink_for(call.id);
  if (call.host_calls) {
    sink.invoke = [id = call.id](std::string_view call_json) { return host_call(id, call_json); };
  }
  return answer(engine, call.id, engine.call(request, sink), /*evaluation=*/false);
}

bool run(js::Engine& engine, const EvaluateSource& eval) {
  const auto timeout = time_left(eval.id, eval.timeout, eval.deadline_ns);
  if (!timeout) return false;
  send(Started{eval.id});
  js::EvalRequest request;
  request.id = eval.id;
  request.source = eval.source;
  request.filename = eval.filename;
  request.globals_json = json::serialize(eval.globals);
  request.prelude = eval.prelude;
  request.prelude_filename = eval.prelude_filename;
  if (eval.clock_ms) request.clock_ms = static_cast<double>(*eval.clock_ms);
  request.io = eval.io;
  request.timeout = *timeout;
  const js::CallSink sink = sink_for(eval.id);
  return answer(engine, eval.id, engine.evaluate(request, sink), /*evaluation=*/true);
}

/// Whether the daemon has written something not read yet (a request waiting).
bool input_waiting() {
  pollfd in{0, POLLIN, 0};
  return ::poll(&in, 1, 0) > 0;
}

}  // namespace

int serve() {
  // Frames only on the original stdout: anything else writing to fd 1 lands on stderr.
  g_out = ::dup(1);
  if (g_out < 0 || ::dup2(2, 1) < 0) return 2;

  js::FrameReader reader;
  g_reader = &reader;
  auto first = read_frame(reader);
  if (!first) return 0;
  auto init = decode_frame(*first);
  if (!init.ok() || !std::holds_alternative<Init>(init.value())) {
    std::fputs("hearth-js-worker: the first frame must be init\n", stderr);
    return 2;
  }
  std::string error;
  auto engine = js::Engine::create(engine_config(std::get<Init>(init.value())), error);
  if (!engine) {
    std::fprintf(stderr, "hearth-js-worker: %s\n", error.c_str());
    return 3;
  }
  send(Ready{::getpid()});

  while (auto payload = read_frame(reader)) {
    auto request = decode_frame(*payload);
    if (!request.ok()) {
      std::fprintf(stderr, "hearth-js-worker: malformed frame: %s\n",
                   request.error().message.c_str());
      return 2;
    }
    if (const auto* call = std::get_if<CallFunction>(&request.value())) {
      after_answer(*engine, run(*engine, *call));
      // Nothing waiting (here, nor in the daemon's queue): the next isolated call of this module
      // gets its realm ready now.
      if (!call->keep_state && !call->busy && reader.buffered() == 0 && !input_waiting()) {
        engine->prepare(call->module);
      }
    } else if (const auto* eval = std::get_if<EvaluateSource>(&request.value())) {
      after_answer(*engine, run(*engine, *eval));
    } else {
      std::fputs("hearth-js-worker: malformed frame: a second init, or an answer to no call\n",
                 stderr);
      return 2;
    }
  }
  return 0;
}

int bench_fresh_global(int iterations, bool eager_classes) {
  std::string error;
  auto engine = js::Engine::create({}, error);
  if (!engine) {
    std::fprintf(stderr, "hearth-js-worker: %s\n", error.c_str());
    return 3;
  }
  const int n = std::max(1, iterations);
  engine->measure_fresh_global(std::min(n, 50), eager_classes);  // warm-up
  std::printf("%.1f\n", engine->measure_fresh_global(n, eager_classes));
  return 0;
}

int bench_call(const std::filesystem::path& service_dir, const std::string& module,
               const std::string& function, int iterations, const std::string& input_json,
               BenchMode mode) {
  js::WorkerConfig config;
  std::error_code ec;
  config.service_dir = std::filesystem::canonical(service_dir, ec);
  std::string error;
  auto engine = ec ? nullptr : js::Engine::create(config, error);
  if (!engine) {
    std::fprintf(stderr, "hearth-js-worker: %s\n", ec ? ec.message().c_str() : error.c_str());
    return 3;
  }
  js::CallRequest request;
  request.module = module;
  request.function = function;
  request.endpoint = function;
  request.input_json = input_json;
  request.keep_state = mode == BenchMode::kKept;
  const int n = std::max(1, iterations);
  const js::CallSink sink;
  std::chrono::steady_clock::duration preparing{};
  auto run_calls = [&](int count) {
    for (int i = 0; i < count; ++i) {
      if (mode == BenchMode::kPrepared) {
        const auto before = std::chrono::steady_clock::now();
        engine->prepare(module);
        preparing += std::chrono::steady_clock::now() - before;
      }
      auto out = engine->call(request, sink);
      engine->after_answer();
      if (out.kind != Outcome::Kind::kOk) {
        std::fprintf(stderr, "hearth-js-worker: %s\n", out.message.c_str());
        return false;
      }
    }
    return true;
  };
  if (!run_calls(std::min(n, 100))) return 1;  // warm-up
  preparing = {};
  const auto start = std::chrono::steady_clock::now();
  if (!run_calls(n)) return 1;
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() -
                                                              start - preparing)
                        .count();
  std::printf("%.1f\n", us / n);
  return 0;
}

}  // namespace hearth::jsworker
