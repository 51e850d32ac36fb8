# `make install` / `cmake --install build/release [--prefix P]` (DESTDIR honoured). The layout
# and why it is so: cmake/InstallDirs.cmake. What is installed, under the prefix:
#   bin/hearth, libexec/hearth/{hearth-launch,hearth-js-worker}, share/hearth/web/
#   share/man/man1/hearth*.1                          (generated: `hearth man`)
#   share/bash-completion/completions/hearth          (generated: `hearth completion bash`)
#   share/zsh/vendor-completions/_hearth              (`hearth completion zsh`)
#   share/fish/vendor_completions.d/hearth.fish       (`hearth completion fish`)
#   lib/systemd/user/hearth.service                   (packaging/hearth.service.in)
#   share/doc/hearth/examples/

# The man pages and completion scripts come from the built hearth's own command line, so they
# never drift from it; regenerated whenever hearth is relinked.
set(HEARTH_GENERATED_DIR "${PROJECT_BINARY_DIR}/generated")
set(hearth_completions
  "${HEARTH_GENERATED_DIR}/completions/hearth"
  "${HEARTH_GENERATED_DIR}/completions/_hearth"
  "${HEARTH_GENERATED_DIR}/completions/hearth.fish")
# In the sanitized builds too: the leak check's report at exit would fail the build for nothing
# these commands do (they allocate once and exit).
set(hearth_run ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0 $<TARGET_FILE:hearth>)
add_custom_command(
  OUTPUT ${hearth_completions} "${HEARTH_GENERATED_DIR}/man1.stamp"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${HEARTH_GENERATED_DIR}/completions"
  COMMAND ${hearth_run} completion bash --out "${HEARTH_GENERATED_DIR}/completions/hearth"
  COMMAND ${hearth_run} completion zsh --out "${HEARTH_GENERATED_DIR}/completions/_hearth"
  COMMAND ${hearth_run} completion fish --out "${HEARTH_GENERATED_DIR}/completions/hearth.fish"
  COMMAND ${CMAKE_COMMAND} -E rm -rf "${HEARTH_GENERATED_DIR}/man1"
  COMMAND ${hearth_run} man --out "${HEARTH_GENERATED_DIR}/man1"
  COMMAND ${CMAKE_COMMAND} -E touch "${HEARTH_GENERATED_DIR}/man1.stamp"
  DEPENDS hearth
  COMMENT "Generating hearth's man pages and shell completions"
  VERBATIM)
add_custom_target(hearth_generated ALL DEPENDS ${hearth_completions}
  "${HEARTH_GENERATED_DIR}/man1.stamp")

install(TARGETS hearth RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT runtime)
install(TARGETS hearth-launch hearth-js-worker
  RUNTIME DESTINATION "${HEARTH_INSTALL_LIBEXECDIR}" COMPONENT runtime)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/web/" DESTINATION "${HEARTH_INSTALL_WEBDIR}"
  COMPONENT runtime)

install(DIRECTORY "${HEARTH_GENERATED_DIR}/man1/" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1"
  COMPONENT doc FILES_MATCHING PATTERN "*.1")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/examples/" DESTINATION "${CMAKE_INSTALL_DOCDIR}/examples"
  COMPONENT doc
  # What the examples write while they run (.gitignore), not part of them.
  PATTERN "*.tmp" EXCLUDE PATTERN "todos.json" EXCLUDE PATTERN ".todos.lock" EXCLUDE
  PATTERN "contacts.db*" EXCLUDE PATTERN "notes.json*" EXCLUDE)

install(FILES "${HEARTH_GENERATED_DIR}/completions/hearth"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" COMPONENT shell)
install(FILES "${HEARTH_GENERATED_DIR}/completions/_hearth"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions" COMPONENT shell)
install(FILES "${HEARTH_GENERATED_DIR}/completions/hearth.fish"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d" COMPONENT shell)

# The systemd user unit names the installed binary, so it is written at install time, when the
# prefix (`cmake --install --prefix`) is known. lib/systemd/user, not the libdir: systemd looks
# there (/usr/lib, /usr/local/lib), and Debian's libdir is the multiarch one.
install(CODE "
  set(HEARTH_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  if(NOT IS_ABSOLUTE \"\${HEARTH_BINDIR}\")
    set(HEARTH_BINDIR \"\${CMAKE_INSTALL_PREFIX}/\${HEARTH_BINDIR}\")
  endif()
  configure_file(\"${PROJECT_SOURCE_DIR}/packaging/hearth.service.in\"
    \"${HEARTH_GENERATED_DIR}/hearth.service\" @ONLY)
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/systemd/user\" TYPE FILE
    FILES \"${HEARTH_GENERATED_DIR}/hearth.service\")
" COMPONENT systemd)
