#pragma once
/// The launcher every handler child is started through (launcher.cpp describes what it does).
/// Part of hearth_jail_launch: it links nothing else of hearth, so that it starts fast.

namespace hearth::jail {

/// Runs the launcher with the command line of `hearth-launch`: applies the restrictions its
/// options ask for, then execve()s the program. Returns only when it cannot (exit status 127).
int launcher_main(int argc, char** argv);

}  // namespace hearth::jail
