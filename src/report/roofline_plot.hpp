// The roofline figures, through gnuplot. One per device: log-log, operations per second over arithmetic
// intensity; one roof per precision (min(peak, intensity x DRAM bandwidth)), datasheet roofs dashed and
// measured ones solid, the measured L2 roof dotted, each benchmark a labelled point with its % of the
// attainable rate. One per benchmark with per-layer times: the same roofs, each layer a point.
// Colours, roofs, axes and labels come from roofline_view.hpp, as in every other roofline output.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "analysis/roofline_placement.hpp"
#include "report/gnuplot.hpp"

namespace inferbench::report {

// The gnuplot script drawing device `device` of `set` (its points and roofs) into `output`.
std::string roofline_script(const analysis::RooflineSet& set, std::size_t device, ImageFormat format,
                            const PlotSize& size, const std::filesystem::path& output);

// One figure per device that has points, per format, in `dir` ("roofline-<device>.png"); returns the files.
std::vector<std::filesystem::path> draw_rooflines(const analysis::RooflineSet& set, const std::filesystem::path& dir,
                                                  std::span<const ImageFormat> formats, const PlotSize& size = {});

// The gnuplot script of one benchmark's layers: the roofs of its device and precision, each placed layer a
// point coloured by op type (layers without a cost, FLOPs or time are not drawn: the title counts them),
// the `labelled` slowest of them named with their share of the time, and the whole benchmark as a star.
std::string layer_roofline_script(const analysis::RooflineSet& set, const analysis::LayerSet& layers,
                                  std::size_t labelled, ImageFormat format, const PlotSize& size,
                                  const std::filesystem::path& output);

// One figure per benchmark in `layers`, per format, in `dir` ("roofline-layers-<id>-<model>-b<batch>.png");
// returns the files.
std::vector<std::filesystem::path> draw_layer_rooflines(const analysis::RooflineSet& set,
                                                        std::span<const analysis::LayerSet> layers,
                                                        const std::filesystem::path& dir,
                                                        std::span<const ImageFormat> formats, std::size_t labelled = 10,
                                                        const PlotSize& size = {});

}  // namespace inferbench::report
