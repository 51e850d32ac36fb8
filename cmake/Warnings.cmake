# Warnings applied to every hearth target (not to third-party headers, which are system includes).
# Not -Wnull-dereference: at -O2 GCC 12 reports it inside Asio's strand, scheduler and executor
# code once inlined into ours (false positives), and most of hearth includes Asio; clang-tidy's
# analyzer checks null dereferences instead. This is the one place such a choice is made.
set(HEARTH_WARNINGS -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor -Wcast-align
    -Wunused -Woverloaded-virtual -Wimplicit-fallthrough)
