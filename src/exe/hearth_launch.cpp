// hearth-launch: the small program every handler child is started through (src/jail/launcher.cpp).
#include "jail/launcher.hpp"

int main(int argc, char** argv) {
  return hearth::jail::launcher_main(argc, argv);
}
