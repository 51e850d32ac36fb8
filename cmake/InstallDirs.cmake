# The installed layout (GNUInstallDirs; `make install`, cmake/Install.cmake):
#   bin/hearth                       the daemon and CLI
#   libexec/hearth/hearth-launch     helpers only hearth runs (FHS 3.0 /usr/libexec, which Debian
#   libexec/hearth/hearth-js-worker  policy allows; lib/ would be the multiarch library folder)
#   share/hearth/web/                the view host's page
# hearth finds the helpers and the page relative to its own binary (src/common/installed.cpp),
# so an installed tree works under any prefix and can be moved.
include(GNUInstallDirs)

set(HEARTH_INSTALL_LIBEXECDIR "${CMAKE_INSTALL_LIBEXECDIR}/hearth")
set(HEARTH_INSTALL_WEBDIR "${CMAKE_INSTALL_DATADIR}/hearth/web")

# The relative paths from the binary's folder, for the compiled-in lookup.
function(hearth_relative_to_bin out dir)
  set(root "/hearth-prefix")
  cmake_path(ABSOLUTE_PATH dir BASE_DIRECTORY "${root}" OUTPUT_VARIABLE abs_dir)
  set(bin "${CMAKE_INSTALL_BINDIR}")
  cmake_path(ABSOLUTE_PATH bin BASE_DIRECTORY "${root}" OUTPUT_VARIABLE abs_bin)
  cmake_path(RELATIVE_PATH abs_dir BASE_DIRECTORY "${abs_bin}" OUTPUT_VARIABLE rel)
  set(${out} "${rel}" PARENT_SCOPE)
endfunction()
hearth_relative_to_bin(HEARTH_LIBEXEC_FROM_BIN "${HEARTH_INSTALL_LIBEXECDIR}")
hearth_relative_to_bin(HEARTH_WEB_FROM_BIN "${HEARTH_INSTALL_WEBDIR}")
