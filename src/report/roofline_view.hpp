// How a roofline set (devices/roofline.hpp) is shown, the one place for every output that shows one:
// the tables of `inferbench roofline` and of the HTML report, the colours, roofs and axes of the gnuplot
// figure (roofline_plot.hpp) and of the report's interactive chart.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "devices/roofline.hpp"
#include "report/html_page.hpp"
#include "report/table.hpp"

namespace inferbench::report {

// One colour per precision, the same in every figure ("#rrggbb").
std::string_view precision_colour(devices::Precision precision);

// A device's benchmarks (points of `set` on device `device`).
std::vector<const devices::RooflinePoint*> device_points(const devices::RooflineSet& set, std::size_t device);

// The compute roofs drawn: those of the precisions the points ran in, or every roof where no point has one.
std::vector<const devices::ComputeRoof*> drawn_roofs(const devices::DeviceRoofs& roofs,
                                                     const std::vector<const devices::RooflinePoint*>& points);

// Axis ranges covering the points, the drawn roofs and their ridge points, in whole decades; y in
// operations per second, shown divided by `scale` (1e12: TFLOP/s, or 1e9 for slow devices).
struct RooflineAxes {
    double x_min = 0.01, x_max = 1000, y_min = 1e9, y_max = 1e15;
    double scale = 1e12;
    std::string unit = "TFLOP/s (TOPS for int8)";
};
RooflineAxes roofline_axes(const devices::DeviceRoofs& roofs, const std::vector<const devices::ComputeRoof*>& drawn,
                           const std::vector<const devices::RooflinePoint*>& points);

// "fp16 measured 735 TFLOP/s, 4.24 TB/s" (the DRAM roof's origin added where it differs).
std::string roof_title(const devices::ComputeRoof& roof, const devices::MemoryRoof* dram);
// "resnet50 b128 fp16: 37% of measured (compute-bound)"
std::string point_label(const devices::RooflinePoint& point);

// Every placed benchmark: intensity, achieved, attainable and % under the datasheet and measured roofs.
Table roofline_points_table(const devices::RooflineSet& set);
// Every device's roofs with their origin and ridge point.
Table roofline_roofs_table(const devices::RooflineSet& set);

// The interactive log-log chart of device `device` for the HTML report: roofs as lines (datasheet or
// estimated dashed, measured solid, the measured L2 roof grey), benchmarks as points per precision,
// each labelled with its batch size and % of the attainable rate (measured roofs where there are).
Chart roofline_chart(const devices::RooflineSet& set, std::size_t device);

}  // namespace inferbench::report
