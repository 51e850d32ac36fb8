// `hearth`: the daemon (`hearth serve`) and the command line (`hearth call`, `hearth check`).
#include "cli/cli.hpp"

int main(int argc, char** argv) {
  return hearth::cli::run(argc, argv);
}
