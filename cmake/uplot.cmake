# uPlot, the chart library the HTML report embeds: scripts/fetch-uplot.sh provisions it into
# third_party/uplot/ (from npm, integrity-checked). Sets INFERBENCH_UPLOT_DIR; configuring fails with
# what to run when it is missing, since every report page needs it inline.
set(INFERBENCH_UPLOT_DIR "${PROJECT_SOURCE_DIR}/third_party/uplot" CACHE PATH
    "uPlot for the HTML report: a folder with uPlot.iife.min.js, uPlot.min.css, LICENSE and VERSION")
foreach(_f uPlot.iife.min.js uPlot.min.css LICENSE VERSION)
  if(NOT EXISTS "${INFERBENCH_UPLOT_DIR}/${_f}")
    message(FATAL_ERROR "uPlot (the HTML report's chart library) is missing: ${INFERBENCH_UPLOT_DIR}/${_f} "
                        "not found. Run scripts/fetch-uplot.sh (needs npm), or set INFERBENCH_UPLOT_DIR.")
  endif()
endforeach()
file(STRINGS "${INFERBENCH_UPLOT_DIR}/VERSION" _uplot_version LIMIT_COUNT 1)
message(STATUS "uPlot: ${INFERBENCH_UPLOT_DIR} (${_uplot_version})")
