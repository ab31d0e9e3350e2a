# ISA-L (Debian: libisal-dev) as the imported target isal::isal: the deflate and CRC-32 of the Excel
# workbooks `inferbench report` writes (report/zip_writer), several times faster than zlib at a like
# ratio, and the inflate of numpy.savez_compressed archives (backends/npz_file). Found through pkg-config
# (libisal.pc), else by its header and library; INFERBENCH_ISAL_ROOT may name a folder with include/isa-l/
# + lib/. A modules-only build goes on without it (its modules read no input files).
set(INFERBENCH_ISAL_ROOT "" CACHE PATH "ISA-L: a folder with include/isa-l/igzip_lib.h + lib/")

if(NOT TARGET isal::isal)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND AND NOT INFERBENCH_ISAL_ROOT)
    pkg_check_modules(ISAL QUIET IMPORTED_TARGET libisal)
  endif()
  if(ISAL_FOUND)
    add_library(isal::isal ALIAS PkgConfig::ISAL)
  else()
    find_path(ISAL_INCLUDE_DIR isa-l/igzip_lib.h HINTS "${INFERBENCH_ISAL_ROOT}/include")
    find_library(ISAL_LIBRARY isal HINTS "${INFERBENCH_ISAL_ROOT}/lib")
    if((NOT ISAL_INCLUDE_DIR OR NOT ISAL_LIBRARY) AND INFERBENCH_MODULES_ONLY)
      message(STATUS "ISA-L not found: this modules-only build reads no compressed .npz members")
      return()
    endif()
    if(NOT ISAL_INCLUDE_DIR OR NOT ISAL_LIBRARY)
      message(FATAL_ERROR "ISA-L not found (needed by `inferbench report`'s workbooks): install Debian's "
                          "libisal-dev (scripts/setup.sh does) or set INFERBENCH_ISAL_ROOT")
    endif()
    add_library(isal::isal UNKNOWN IMPORTED)
    set_target_properties(isal::isal PROPERTIES
      IMPORTED_LOCATION "${ISAL_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${ISAL_INCLUDE_DIR}")
  endif()
endif()
