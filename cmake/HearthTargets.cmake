# hearth_library(NAME SOURCES... DEPS...): a static library for one area of src/.
function(hearth_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(hearth_${name} STATIC ${ARG_SOURCES})
  target_include_directories(hearth_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(hearth_${name} PRIVATE ${HEARTH_WARNINGS})
  target_link_libraries(hearth_${name} PUBLIC ${ARG_DEPS})
endfunction()

# hearth_test(NAME SOURCES... DEPS...): a GoogleTest executable whose cases are registered with ctest.
function(hearth_test name)
  if(NOT HEARTH_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  # Compiled file by file even in the release preset's unity build: batched, a cold `make test`
  # was no faster (most test executables are one file), and ccache, which cannot reuse a batch
  # in a clone at another path, could no longer serve the test files to CI (docs/benchmarks.md).
  set_target_properties(${name} PROPERTIES UNITY_BUILD OFF)
  target_compile_options(${name} PRIVATE ${HEARTH_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
    PROPERTIES ENVIRONMENT "HEARTH_SOURCE_DIR=${PROJECT_SOURCE_DIR};HEARTH_BINARY_DIR=${PROJECT_BINARY_DIR}")
endfunction()
