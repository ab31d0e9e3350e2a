// The roofline figure of one device: log-log, operations per second over arithmetic intensity; one roof
// per precision (min(peak, intensity x DRAM bandwidth)), datasheet roofs dashed and measured ones solid,
// the measured L2 roof dotted, each benchmark a labelled point with its % of the attainable rate.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "devices/roofline.hpp"
#include "report/gnuplot.hpp"

namespace inferbench::report {

// The gnuplot script drawing device `device` of `set` (its points and roofs) into `output`.
std::string roofline_script(const devices::RooflineSet& set, std::size_t device, ImageFormat format,
                            const PlotSize& size, const std::filesystem::path& output);

// One figure per device that has points, per format, in `dir` ("roofline-<device>.png"); returns the files.
std::vector<std::filesystem::path> draw_rooflines(const devices::RooflineSet& set, const std::filesystem::path& dir,
                                                  std::span<const ImageFormat> formats, const PlotSize& size = {});

}  // namespace inferbench::report
