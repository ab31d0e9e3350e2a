// What every HTML page of inferbench carries inline, embedded into the binary at build time
// (cmake/embed_files.cmake): uPlot from npm (scripts/fetch-uplot.sh) and the page's own script and style
// (src/report/html/). A report therefore needs nothing at run time and opens offline.
#pragma once

#include <string_view>

namespace inferbench::report::html_assets {

std::string_view uplot_js();       // dist/uPlot.iife.min.js: defines the global uPlot
std::string_view uplot_css();      // dist/uPlot.min.css
std::string_view uplot_license();  // its MIT license, kept in every page as a comment
std::string_view uplot_version();  // "npm: uplot 1.6.32 sha512-..." as fetch-uplot.sh recorded it
std::string_view page_js();        // html/page.js: sortable tables, charts, the render check
std::string_view page_css();       // html/page.css

}  // namespace inferbench::report::html_assets
