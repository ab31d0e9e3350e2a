// How a roofline set (analysis/roofline_placement.hpp) is shown, the one place for every output that shows
// one: the tables of `inferbench roofline` and of the HTML report, the colours, roofs and axes of the gnuplot
// figure (roofline_plot.hpp) and of the report's interactive chart.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/roofline_placement.hpp"
#include "report/html_page.hpp"
#include "report/table.hpp"

namespace inferbench::report {

// One colour per precision, the same in every figure ("#rrggbb").
std::string_view precision_colour(devices::Precision precision);

// A device's benchmarks (points of `set` on device `device`).
std::vector<const analysis::RooflinePoint*> device_points(const analysis::RooflineSet& set, std::size_t device);

// The compute roofs drawn: those of the precisions the points ran in, or every roof where no point has one.
std::vector<const devices::ComputeRoof*> drawn_roofs(const devices::DeviceRoofs& roofs,
                                                     const std::vector<const analysis::RooflinePoint*>& points);

// Axis ranges covering the points, the drawn roofs and their ridge points, in whole decades; y in
// operations per second, shown divided by `scale` (1e12: TFLOP/s, or 1e9 for slow devices).
struct RooflineAxes {
    double x_min = 0.01, x_max = 1000, y_min = 1e9, y_max = 1e15;
    double scale = 1e12;
    std::string unit = "TFLOP/s (TOPS for int8)";
};
RooflineAxes roofline_axes(const devices::DeviceRoofs& roofs, const std::vector<const devices::ComputeRoof*>& drawn,
                           const std::vector<const analysis::RooflinePoint*>& points);

// "fp16 measured 735 TFLOP/s, 4.24 TB/s" (the DRAM roof's origin added where it differs).
std::string roof_title(const devices::ComputeRoof& roof, const devices::MemoryRoof* dram);
// One line per drawn roof that is an estimate (a CPU's, computed from its clock and vector width):
// that it is one, and that a point above it means the estimate is low.
std::vector<std::string> estimated_roof_notes(const devices::DeviceRoofs& roofs,
                                              const std::vector<const devices::ComputeRoof*>& drawn);
// "resnet50 b128 fp16: 37% of measured (compute-bound)"
std::string point_label(const analysis::RooflinePoint& point);

// Every placed benchmark: intensity, achieved, attainable and % under the datasheet and measured roofs.
Table roofline_points_table(const analysis::RooflineSet& set);
// Every device's roofs with their origin and ridge point.
Table roofline_roofs_table(const analysis::RooflineSet& set);

// Per layer (analysis::LayerSet: a benchmark's stored layer times under its roofs).
// "benchmark 3, mobilenet b1 fp32 (onnxruntime on cpu)"
std::string roofline_benchmark_title(const analysis::RooflinePoint& point);
// The `top` slowest layers (all for 0), slowest first.
std::vector<const analysis::LayerPoint*> slowest_layers(const analysis::LayerSet& layers, std::size_t top);
// Each of the `top` slowest layers: time, share, intensity, achieved, % of the attainable rate, bound.
Table roofline_layers_table(const analysis::RooflinePoint& point, const analysis::LayerSet& layers, std::size_t top);
// What the reader of one benchmark's layers should know: what is left out and why, and how to get more.
std::vector<std::string> roofline_layer_notes(const analysis::RooflinePoint& point, const analysis::LayerSet& layers);
// A layer that can be drawn: it has a cost, bytes and a time.
bool drawable_layer(const analysis::LayerPoint& layer);
// The op types of `layers`, the one with the most time first, and each one's share of the time.
std::vector<std::pair<std::string, double>> op_types_by_time(const std::vector<const analysis::LayerPoint*>& layers);
// The colour of the k-th op type of a layer figure.
std::string_view op_colour(std::size_t k);
// Axes covering the benchmark, its roofs and the given layers.
RooflineAxes layer_roofline_axes(const analysis::RooflineSet& set, const analysis::LayerSet& layers,
                                 const std::vector<const analysis::LayerPoint*>& placed);

// The interactive log-log chart of one benchmark's layers for the HTML report: the roofs of its
// precision, each drawable layer a point coloured by op type, the `labelled` slowest named.
Chart roofline_layers_chart(const analysis::RooflineSet& set, const analysis::LayerSet& layers, std::size_t labelled);

// The interactive log-log chart of device `device` for the HTML report: roofs as lines (datasheet or
// estimated dashed, measured solid, the measured L2 roof grey), benchmarks as points per precision,
// each labelled with its batch size and % of the attainable rate (measured roofs where there are).
Chart roofline_chart(const analysis::RooflineSet& set, std::size_t device);

}  // namespace inferbench::report
