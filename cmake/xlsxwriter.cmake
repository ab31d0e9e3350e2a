# libxlsxwriter (Debian: libxlsxwriter-dev) as the imported target xlsxwriter::xlsxwriter, for the
# Excel workbooks of `inferbench report`. Found through pkg-config (xlsxwriter.pc), else by its header
# and library; INFERBENCH_XLSXWRITER_ROOT may name a folder with include/ + lib/.
set(INFERBENCH_XLSXWRITER_ROOT "" CACHE PATH "libxlsxwriter: a folder with include/xlsxwriter.h + lib/")

if(NOT TARGET xlsxwriter::xlsxwriter)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND AND NOT INFERBENCH_XLSXWRITER_ROOT)
    pkg_check_modules(XLSXWRITER QUIET IMPORTED_TARGET xlsxwriter)
  endif()
  if(XLSXWRITER_FOUND)
    add_library(xlsxwriter::xlsxwriter ALIAS PkgConfig::XLSXWRITER)
  else()
    find_path(XLSXWRITER_INCLUDE_DIR xlsxwriter.h HINTS "${INFERBENCH_XLSXWRITER_ROOT}/include")
    find_library(XLSXWRITER_LIBRARY xlsxwriter HINTS "${INFERBENCH_XLSXWRITER_ROOT}/lib")
    find_package(ZLIB QUIET)
    if(NOT XLSXWRITER_INCLUDE_DIR OR NOT XLSXWRITER_LIBRARY OR NOT ZLIB_FOUND)
      message(FATAL_ERROR "libxlsxwriter not found (needed by `inferbench report`): install Debian's "
                          "libxlsxwriter-dev (scripts/setup.sh does) or set INFERBENCH_XLSXWRITER_ROOT")
    endif()
    add_library(xlsxwriter::xlsxwriter UNKNOWN IMPORTED)
    set_target_properties(xlsxwriter::xlsxwriter PROPERTIES
      IMPORTED_LOCATION "${XLSXWRITER_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${XLSXWRITER_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES ZLIB::ZLIB)
  endif()
endif()
