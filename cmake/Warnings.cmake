# Warnings applied to every hearth target (not to third-party headers, which are system includes).
# Not -Wnull-dereference: at -O2 GCC 12 reports it inside Asio's strand, scheduler and executor
# code once inlined into ours (false positives), and most of hearth includes Asio; clang-tidy's
# analyzer checks null dereferences instead. This is the one place such a choice is made.
set(HEARTH_WARNINGS -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor -Wcast-align
    -Wunused -Woverloaded-virtual -Wimplicit-fallthrough)
# The release preset builds each library's sources in batches (CMAKE_UNITY_BUILD: one compile of
# the Asio, Beast and JSON templates per batch instead of per file, half the CPU of a cold build).
# A batch file includes the .cpp files, so GCC takes them for headers and reports a class in one
# of them whose members use that file's anonymous-namespace types (-Wsubobject-linkage); the dev
# preset builds file by file and keeps the warning.
if(CMAKE_UNITY_BUILD)
  list(APPEND HEARTH_WARNINGS -Wno-subobject-linkage)
endif()
# GCC 12 reports -Wmismatched-new-delete at the end of larger coroutines: Asio allocates a frame
# past its recycling cache with aligned_alloc (thread_info_base::allocate) and frees it with the
# matching aligned_delete, but GCC sees only the awaitable frame's operator new/delete pair. A
# false positive in Boost's headers, reported in whichever of hearth's files inlines enough of a
# coroutine (which ones changes with the build type and the unity batches), so it is turned off
# here for GCC 12 as a whole rather than file by file.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND HEARTH_WARNINGS -Wno-mismatched-new-delete)
endif()
