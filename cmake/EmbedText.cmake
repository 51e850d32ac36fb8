# hearth_embed_text(INPUT OUTPUT NAME NAMESPACE): writes the header OUTPUT defining
# `inline constexpr std::string_view NAME` in NAMESPACE with the text of INPUT, so that a script
# kept as a source file of its own (src/mcpserver/app_bridge.js) is compiled in. Done when CMake
# configures (an edit of INPUT configures again), so that a tree that is only configured, as
# scripts/lint.sh's for clang-tidy, has the header too.
function(hearth_embed_text input output name namespace)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${input}")
  file(READ "${input}" text)
  string(FIND "${text}" ")HEARTH_EMBED\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${input} contains the raw string delimiter )HEARTH_EMBED\"")
  endif()
  get_filename_component(source_name "${input}" NAME)
  file(CONFIGURE OUTPUT "${output}" @ONLY CONTENT
    "#pragma once\n// Generated from ${source_name} by cmake/EmbedText.cmake: edit that file.\n#include <string_view>\n\nnamespace ${namespace} {\ninline constexpr std::string_view ${name} = R\"HEARTH_EMBED(@text@)HEARTH_EMBED\";\n}\n")
endfunction()
