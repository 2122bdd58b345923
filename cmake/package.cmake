# Installation layout and the Debian package (CPack): `scripts/package.sh` configures a build with
# the installed paths compiled in and runs `cpack -G DEB`:
#   /usr/bin/fmte-advise, /usr/bin/fmte-retrain, /usr/bin/fmte-sample (etc/slurm/fmte-sample.sbatch)
#   <Slurm's plugin directory>/job_submit_fmte.so, spank_fmte.so   (Debian: /usr/lib/<arch>/slurm-wlm)
#   /etc/fmte/            catalogs: models/, gpus.csv, clusters/, launchers.json     (conffiles)
#   /etc/slurm/fmte.conf  the example policy, as shipped in etc/fmte.conf           (conffile)
#   /usr/share/fmte/regressors/   shipped regressors with their provenance
#   /usr/share/man/man1/fmte-advise.1.gz, fmte-retrain.1.gz, man5/fmte.conf.5.gz
# The package depends on the exact version of Debian's Slurm plugins package that the plugins were
# built against (plugin_version must equal slurmctld's SLURM_VERSION_NUMBER, micro version included).

include(GNUInstallDirs)
set(FMTE_SLURM_PLUGIN_DIR "${CMAKE_INSTALL_LIBDIR}/slurm-wlm" CACHE STRING
    "Slurm's plugin directory, relative to the install prefix (Debian: lib/<arch>/slurm-wlm)")
set(FMTE_ETC_INSTALL_DIR "/etc/fmte" CACHE PATH "Where the package puts the catalogs")
set(FMTE_REGRESSORS_INSTALL_DIR "${CMAKE_INSTALL_DATADIR}/fmte/regressors" CACHE PATH
    "Where the package puts the shipped regressors (relative: under the prefix)")

if(TARGET job_submit_fmte)
  install(TARGETS job_submit_fmte spank_fmte LIBRARY DESTINATION ${FMTE_SLURM_PLUGIN_DIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/etc/ DESTINATION ${FMTE_ETC_INSTALL_DIR}
        PATTERN "fmte.conf" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/etc/fmte.conf DESTINATION /etc/slurm)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/regressors/ DESTINATION ${FMTE_REGRESSORS_INSTALL_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The sampler for a site's own operator regressors (Python with PyTorch, run on the GPU nodes).
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/fmte-sample DESTINATION ${CMAKE_INSTALL_BINDIR})

# Man pages, compressed as Debian installs them.
find_program(FMTE_GZIP gzip REQUIRED)
set(man_gz)
foreach(page fmte-advise.1 fmte-retrain.1 fmte.conf.5)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/man/${page}.gz)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/man
    COMMAND ${FMTE_GZIP} -9nc ${PROJECT_SOURCE_DIR}/docs/man/${page} > ${out}
    DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/${page} VERBATIM)
  list(APPEND man_gz ${out})
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${page})
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()
add_custom_target(fmte_man ALL DEPENDS ${man_gz})

# The Debian package.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fmte)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "fmte maintainers <fmte@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "LLM training jobs that ask for what they need: Slurm admission by predicted GPU memory and time")
set(CPACK_PACKAGE_DESCRIPTION
    "fmte predicts the peak GPU memory per GPU and the wall time of LLM training and fine-tuning jobs
from how they train (model, method, batch, sequence length, parallelism). Its Slurm job_submit
plugin accepts, rewrites (time limit, GPU count) or rejects jobs at submit time with advice; its
SPANK plugin reads batch scripts and their config files in sbatch. fmte-advise asks the same
estimator by hand (and serves a web calculator); fmte-retrain learns from sacct exports.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # fmte_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # dpkg-shlibdeps: XGBoost, curl, yaml-cpp, httplib, ...
set(CPACK_STRIP_FILES ON)  # no debug information in the package (RelWithDebInfo build)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/fmte/fmte")

# The exact Slurm the plugins were built against: the version of the package that owns the
# headers, checked against the headers' SLURM_VERSION_NUMBER.
set(FMTE_SLURM_DEB_VERSION "" CACHE STRING "Debian version of Slurm to depend on (default: libslurm-dev's)")
if(NOT FMTE_SLURM_DEB_VERSION)
  execute_process(COMMAND dpkg-query -W -f=\${Version} libslurm-dev
                  OUTPUT_VARIABLE FMTE_SLURM_DEB_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(FMTE_SLURM_DEB_VERSION "")
  endif()
endif()
if(FMTE_SLURM_DEB_VERSION AND FMTE_SLURM_VERSION)  # slurm_plugin/CMakeLists.txt: "22.05.8"
  string(REPLACE "." "\\." version_re "${FMTE_SLURM_VERSION}")
  if(NOT FMTE_SLURM_DEB_VERSION MATCHES "^([0-9]+:)?${version_re}-")
    message(FATAL_ERROR "fmte: libslurm-dev ${FMTE_SLURM_DEB_VERSION} does not match the headers' "
                        "SLURM_VERSION_NUMBER (${FMTE_SLURM_VERSION})")
  endif()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "slurm-wlm-basic-plugins (= ${FMTE_SLURM_DEB_VERSION})")
  message(STATUS "fmte: the package depends on slurm-wlm-basic-plugins (= ${FMTE_SLURM_DEB_VERSION})")
elseif(TARGET job_submit_fmte)
  message(WARNING "fmte: no Debian Slurm version found (dpkg-query libslurm-dev): the package "
                  "will not pin Slurm; set -DFMTE_SLURM_DEB_VERSION=...")
endif()

# Everything under /etc is a conffile: dpkg keeps a sysadmin's edits on upgrade.
file(GLOB_RECURSE etc_files RELATIVE ${PROJECT_SOURCE_DIR}/etc ${PROJECT_SOURCE_DIR}/etc/*)
set(conffiles "/etc/slurm/fmte.conf\n")
foreach(f IN LISTS etc_files)
  if(NOT f STREQUAL "fmte.conf")
    string(APPEND conffiles "${FMTE_ETC_INSTALL_DIR}/${f}\n")
  endif()
endforeach()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles "${conffiles}")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles)
include(CPack)
