// The list arguments the reading commands share (report, compare, roofline): comma lists split and
// checked the same way everywhere, batch sizes and image formats parsed once.
#pragma once

#include <string_view>
#include <vector>

#include "report/gnuplot.hpp"
#include "report/selection.hpp"

namespace inferbench::cli {

// CLI11 splits at commas; "1, 8" leaves spaces, and an empty item says something was mistyped:
// UserError naming `flag`.
std::vector<std::string> list_items(const std::vector<std::string>& values, std::string_view flag);

// `raw`'s lists cleaned, plus `batches` ("--batch" texts) parsed; runs kept as given.
report::ReportFilter cleaned_filter(const report::ReportFilter& raw, const std::vector<std::string>& batches);

// "png", "svg" (--format); UserError for anything else.
std::vector<report::ImageFormat> image_formats(const std::vector<std::string>& names);

}  // namespace inferbench::cli
