#pragma once
/// The `hearth` command line: serve, call, check. Logs go to stderr; data to stdout.

namespace hearth::cli {

/// Runs the command line; returns the process exit code.
int run(int argc, char** argv);

}  // namespace hearth::cli
