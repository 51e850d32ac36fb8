// hearth-js-worker: one JavaScript engine serving the daemon's requests over stdin/stdout frames
// (src/jsworker/serve.hpp; the messages are in src/jsworker/protocol.hpp and docs/protocol.md).
//
//   hearth-js-worker                 serve frames on stdin/stdout
//   hearth-js-worker --bench-global N [--eager-classes]
//       print the microseconds one fresh global costs (with every standard class initialised up
//       front: what hearth avoids), then exit
//   hearth-js-worker --bench-call DIR MODULE FUNCTION N [INPUT]
//       run N calls of MODULE's FUNCTION (DIR: the service folder) in this process, without the
//       daemon or pipes, and print the microseconds per call (each call a fresh realm and module
//       instance, the default isolation); --bench-kept: the same with the module instance kept
//       between calls (`isolation: "worker"`); --bench-prepared: each call's realm prepared
//       before it, as an idle worker does, and only the call timed

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "jsworker/serve.hpp"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  int rc = 2;
  if ((argc == 3 || argc == 4) && std::strcmp(argv[1], "--bench-global") == 0) {
    const bool eager = argc == 4 && std::strcmp(argv[3], "--eager-classes") == 0;
    rc = hearth::jsworker::bench_fresh_global(std::atoi(argv[2]), eager);
  } else if ((argc == 6 || argc == 7) && (std::strcmp(argv[1], "--bench-call") == 0 ||
                                          std::strcmp(argv[1], "--bench-kept") == 0 ||
                                          std::strcmp(argv[1], "--bench-prepared") == 0)) {
    using hearth::jsworker::BenchMode;
    const BenchMode mode = std::strcmp(argv[1], "--bench-kept") == 0       ? BenchMode::kKept
                           : std::strcmp(argv[1], "--bench-prepared") == 0 ? BenchMode::kPrepared
                                                                           : BenchMode::kFresh;
    rc = hearth::jsworker::bench_call(argv[2], argv[3], argv[4], std::atoi(argv[5]),
                                      argc == 7 ? argv[6] : "null", mode);
  } else if (argc == 1) {
    rc = hearth::jsworker::serve();
  } else {
    std::fputs(
        "usage: hearth-js-worker [--bench-global N [--eager-classes]]\n"
        "       hearth-js-worker --bench-call|--bench-kept|--bench-prepared DIR MODULE FUNCTION N "
        "[INPUT]\n"
        "  Serves the hearth daemon's JavaScript calls over stdin/stdout.\n",
        stderr);
  }
  // SpiderMonkey is never shut down (JS_ShutDown): exit without static destructors.
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(rc);
}
