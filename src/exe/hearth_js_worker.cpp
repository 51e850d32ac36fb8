// hearth-js-worker: one JavaScript engine serving `function` handler calls for the daemon, one call
// at a time, over stdin/stdout frames (js/frame.hpp; the messages are listed in docs/protocol.md).
// The daemon starts it through the jail with the endpoint's permissions and replaces it when it
// crashes, runs out of memory or ignores a time limit.
//
//   hearth-js-worker                 serve frames on stdin/stdout
//   hearth-js-worker --bench-global N [--eager-classes]
//       print the microseconds one fresh global costs (with every standard class initialised up
//       front: what hearth avoids), then exit
//   hearth-js-worker --bench-call DIR MODULE FUNCTION N [INPUT]
//       run N calls of MODULE's FUNCTION (DIR: the service folder) in this process, without the
//       daemon or pipes, and print the microseconds per call

#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "js/engine.hpp"
#include "js/frame.hpp"

namespace {

namespace json = boost::json;
using hearth::js::Outcome;

int g_out = -1;  ///< the frame channel (the original stdout)

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

void send(const json::object& message) {
  write_all(hearth::js::encode_frame(json::serialize(message)));
}

/// The next frame on stdin, nullopt at EOF. A malformed stream ends the worker.
std::optional<std::string> read_frame(hearth::js::FrameReader& reader) {
  for (;;) {
    if (auto frame = reader.next()) return frame;
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

std::string string_field(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

hearth::js::WorkerConfig parse_init(const json::object& init) {
  hearth::js::WorkerConfig config;
  config.service_dir = string_field(init, "serviceDir");
  config.service = string_field(init, "service");
  if (const auto* fa = init.if_contains("fileAccess"); fa != nullptr && fa->is_array()) {
    std::vector<std::string> globs;
    for (const auto& g : fa->get_array()) {
      if (g.is_string()) globs.emplace_back(g.get_string());
    }
    config.file_access = std::move(globs);
  }
  if (const auto* net = init.if_contains("network"); net != nullptr) {
    if (net->is_bool()) {
      config.network = net->get_bool();
    } else if (net->is_array()) {
      std::vector<std::string> hosts;
      for (const auto& h : net->get_array()) {
        if (h.is_string()) hosts.emplace_back(h.get_string());
      }
      config.network = std::move(hosts);
      // The jail's egress proxy, when there is one (not under --insecure-no-sandbox).
      if (const char* proxy = std::getenv("HTTP_PROXY"); proxy != nullptr) {
        const std::string p(proxy);
        const auto colon = p.rfind(':');
        if (colon != std::string::npos) {
          config.proxy_port = static_cast<std::uint16_t>(std::atoi(p.c_str() + colon + 1));
        }
      }
    }
  }
  if (const auto* heap = init.if_contains("maxHeap"); heap != nullptr && heap->is_number()) {
    config.max_heap = heap->to_number<std::uint64_t>();
  }
  if (const auto* subs = init.if_contains("subscriptions"); subs != nullptr && subs->is_array()) {
    for (const auto& s : subs->get_array()) {
      if (s.is_string()) config.subscriptions.emplace_back(s.get_string());
    }
  }
  return config;
}

const char* kind_name(Outcome::Kind kind) {
  switch (kind) {
    case Outcome::Kind::kOk:
      return "ok";
    case Outcome::Kind::kThrown:
      return "thrown";
    case Outcome::Kind::kPermission:
      return "permission";
    case Outcome::Kind::kTimeout:
      return "timeout";
    case Outcome::Kind::kOutOfMemory:
      return "oom";
    case Outcome::Kind::kConfig:
      return "config";
  }
  return "thrown";
}

int serve() {
  // Frames only on the original stdout: anything else writing to fd 1 lands on stderr.
  g_out = ::dup(1);
  if (g_out < 0 || ::dup2(2, 1) < 0) return 2;

  hearth::js::FrameReader reader;
  auto first = read_frame(reader);
  if (!first) return 0;
  json::value init_value = json::parse(*first);
  if (!init_value.is_object() || string_field(init_value.get_object(), "t") != "init") {
    std::fputs("hearth-js-worker: the first frame must be init\n", stderr);
    return 2;
  }
  std::string error;
  auto engine = hearth::js::Engine::create(parse_init(init_value.get_object()), error);
  if (!engine) {
    std::fprintf(stderr, "hearth-js-worker: %s\n", error.c_str());
    return 3;
  }
  send({{"t", "ready"}, {"pid", ::getpid()}});

  while (auto frame = read_frame(reader)) {
    boost::system::error_code ec;
    json::value v = json::parse(*frame, ec);
    if (ec || !v.is_object()) {
      std::fputs("hearth-js-worker: malformed frame\n", stderr);
      return 2;
    }
    const auto& msg = v.get_object();
    if (string_field(msg, "t") != "call") continue;
    hearth::js::CallRequest request;
    const auto* id = msg.if_contains("id");
    request.id = id != nullptr && id->is_number() ? id->to_number<std::uint64_t>() : 0;
    request.module = string_field(msg, "module");
    request.function = string_field(msg, "function");
    request.endpoint = string_field(msg, "endpoint");
    if (const auto* m = msg.if_contains("mutation"); m != nullptr && m->is_bool()) {
      request.mutation = m->get_bool();
    }
    if (const auto* input = msg.if_contains("input")) request.input_json = json::serialize(*input);
    if (const auto* t = msg.if_contains("timeoutMs"); t != nullptr && t->is_number()) {
      request.timeout = std::chrono::milliseconds(t->to_number<std::int64_t>());
    }

    // Tells the daemon the call began: a worker that dies before this is known not to have run
    // any of it, and the call is given to another worker.
    send({{"t", "start"}, {"id", request.id}});

    hearth::js::CallSink sink;
    sink.log = [&request](std::string_view level, std::string_view text) {
      send({{"t", "log"}, {"id", request.id}, {"level", level}, {"message", text}});
    };
    sink.publish = [&request](std::string_view subscription, std::string_view data) {
      json::object m{{"t", "publish"}, {"id", request.id}, {"subscription", subscription}};
      boost::system::error_code pec;
      m["data"] = json::parse(data, pec);
      send(m);
    };
    Outcome out = engine->call(request, sink);
    if (out.kind == Outcome::Kind::kOk) {
      // value_json is JSON.stringify's output: spliced in as it is, not parsed again.
      write_all(hearth::js::encode_frame(R"({"t":"result","id":)" + std::to_string(request.id) +
                                         R"(,"value":)" + out.value_json + "}"));
      continue;
    }
    json::object m{{"t", "error"},          {"id", request.id},       {"kind", kind_name(out.kind)},
                   {"message", out.message}, {"name", out.name},       {"stack", out.stack},
                   {"file", out.file},       {"line", out.line},       {"column", out.column}};
    send(m);
    // After the heap limit the engine's state is not trusted: exit, the daemon starts another.
    if (out.kind == Outcome::Kind::kOutOfMemory) std::_Exit(0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  if ((argc == 3 || argc == 4) && std::strcmp(argv[1], "--bench-global") == 0) {
    const bool eager = argc == 4 && std::strcmp(argv[3], "--eager-classes") == 0;
    std::string error;
    auto engine = hearth::js::Engine::create({}, error);
    if (!engine) {
      std::fprintf(stderr, "hearth-js-worker: %s\n", error.c_str());
      return 3;
    }
    const int n = std::max(1, std::atoi(argv[2]));
    engine->measure_fresh_global(std::min(n, 50), eager);  // warm-up
    std::printf("%.1f\n", engine->measure_fresh_global(n, eager));
    std::fflush(stdout);
    std::_Exit(0);
  }
  if ((argc == 6 || argc == 7) && std::strcmp(argv[1], "--bench-call") == 0) {
    hearth::js::WorkerConfig config;
    std::error_code ec;
    config.service_dir = std::filesystem::canonical(argv[2], ec);
    std::string error;
    auto engine = ec ? nullptr : hearth::js::Engine::create(config, error);
    if (!engine) {
      std::fprintf(stderr, "hearth-js-worker: %s\n", ec ? ec.message().c_str() : error.c_str());
      return 3;
    }
    hearth::js::CallRequest request;
    request.module = argv[3];
    request.function = argv[4];
    request.endpoint = argv[4];
    if (argc == 7) request.input_json = argv[6];
    const int n = std::max(1, std::atoi(argv[5]));
    const hearth::js::CallSink sink;
    auto run = [&](int count) {
      for (int i = 0; i < count; ++i) {
        auto out = engine->call(request, sink);
        if (out.kind != Outcome::Kind::kOk) {
          std::fprintf(stderr, "hearth-js-worker: %s\n", out.message.c_str());
          std::_Exit(1);
        }
      }
    };
    run(std::min(n, 100));  // warm-up
    const auto start = std::chrono::steady_clock::now();
    run(n);
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    std::printf("%.1f\n", us / n);
    std::fflush(stdout);
    std::_Exit(0);
  }
  if (argc != 1) {
    std::fputs("usage: hearth-js-worker [--bench-global N [--eager-classes]]\n"
               "       hearth-js-worker --bench-call DIR MODULE FUNCTION N [INPUT]\n"
               "  Serves the hearth daemon's JavaScript calls over stdin/stdout.\n",
               stderr);
    return 2;
  }
  const int rc = serve();
  std::fflush(stderr);
  std::_Exit(rc);
}
