#include "report/roofline_plot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/units.hpp"
#include "devices/quantities.hpp"
#include "report/selection.hpp"

namespace inferbench::report {
namespace {

using devices::Precision;
using devices::RoofOrigin;

std::string_view color(Precision precision) {
    switch (precision) {
        case Precision::fp64:
            return "#7f7f7f";
        case Precision::fp32:
            return "#1f77b4";
        case Precision::tf32:
            return "#17becf";
        case Precision::fp16:
            return "#2ca02c";
        case Precision::bf16:
            return "#9467bd";
        case Precision::fp8:
            return "#d62728";
        case Precision::int8:
            return "#ff7f0e";
        case Precision::int4:
            return "#8c564b";
    }
    return "#000000";
}

double decade_below(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_above(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

struct Axes {
    double x_min = 0.01, x_max = 1000, y_min = 1e9, y_max = 1e15;
    double scale = 1e12;  // y values are divided by this
    std::string unit = "TFLOP/s (TOPS for int8)";
};

// Roofs drawn: the precisions the device's points ran in, or every roof where no point has one.
std::vector<const devices::ComputeRoof*> drawn_roofs(const devices::DeviceRoofs& roofs,
                                                     const std::vector<const devices::RooflinePoint*>& points) {
    std::set<Precision> wanted;
    for (const auto* p : points) {
        if (p->precision) wanted.insert(*p->precision);
    }
    std::vector<const devices::ComputeRoof*> drawn;
    for (const auto& roof : roofs.compute) {
        if (wanted.empty() || wanted.contains(roof.precision)) drawn.push_back(&roof);
    }
    return drawn;
}

Axes axes_for(const devices::DeviceRoofs& roofs, const std::vector<const devices::ComputeRoof*>& drawn,
              const std::vector<const devices::RooflinePoint*>& points) {
    double x_lo = std::numeric_limits<double>::max(), x_hi = 0, y_lo = std::numeric_limits<double>::max(), y_hi = 0;
    const auto take_x = [&](double x) { x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x); };
    const auto take_y = [&](double y) { y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y); };
    for (const auto* p : points) {
        take_x(p->intensity);
        take_y(p->achieved_per_s);
    }
    for (const auto* roof : drawn) {
        take_y(roof->per_s);
        if (const auto* dram = roofs.dram_for(*roof)) take_x(devices::ridge_point(roof->per_s, dram->bytes_per_s));
    }
    Axes axes;
    if (x_hi <= 0 || y_hi <= 0) return axes;
    axes.x_min = decade_below(x_lo / 3);
    axes.x_max = decade_above(x_hi * 3);
    for (const auto& memory : roofs.memory) take_y(memory.bytes_per_s * axes.x_min);
    axes.y_min = decade_below(y_lo / 3);
    axes.y_max = decade_above(y_hi * 2);
    if (y_hi < 1e12) {
        axes.scale = 1e9;
        axes.unit = "GFLOP/s (GOPS for int8)";
    }
    return axes;
}

std::string roof_title(const devices::ComputeRoof& roof, const devices::MemoryRoof* dram) {
    const bool integer = devices::is_integer(roof.precision);
    std::string title = fmt::format("{} {} {}", devices::precision_name(roof.precision),
                                    devices::origin_name(roof.origin), devices::format_rate(roof.per_s, integer));
    if (dram) {
        title += ", " + devices::format_bandwidth(dram->bytes_per_s);
        if (dram->origin != roof.origin) title += fmt::format(" ({})", devices::origin_name(dram->origin));
    }
    return title;
}

std::string point_label(const devices::RooflinePoint& p) {
    const auto& placement = p.measured ? p.measured : p.datasheet;
    if (!placement) return p.label;
    return fmt::format("{}: {:.0f}% of {} ({})", p.label, placement->percent, devices::origin_name(placement->origin),
                       devices::bound_name(placement->bound));
}

}  // namespace

std::string roofline_script(const devices::RooflineSet& set, std::size_t device, ImageFormat format,
                            const PlotSize& size, const std::filesystem::path& output) {
    const devices::DeviceRoofs& roofs = set.devices.at(device);
    std::vector<const devices::RooflinePoint*> points;
    for (const auto& p : set.points) {
        if (p.device == device) points.push_back(&p);
    }
    const auto drawn = drawn_roofs(roofs, points);
    const Axes axes = axes_for(roofs, drawn, points);
    std::string s = gnuplot_terminal(format, size, output);
    s += "set title " +
         gnuplot_quote(fmt::format("Roofline: {} (datasheet or estimated roofs dashed, measured solid)", roofs.name)) +
         "\n";
    s += "set logscale xy\nset grid xtics ytics mxtics mytics lc rgb '#dddddd'\nset key inside top left opaque box lc "
         "rgb '#cccccc' font ',9'\nset samples 2000\n";
    s += "set xlabel 'arithmetic intensity (FLOP per byte; OP per byte for int8)'\n";
    s += "set ylabel " + gnuplot_quote(axes.unit) + "\n";
    s += fmt::format("set xrange [{:g}:{:g}]\nset yrange [{:g}:{:g}]\n", axes.x_min, axes.x_max,
                     axes.y_min / axes.scale, axes.y_max / axes.scale);
    std::vector<std::string> plots;
    int index = 0;
    for (const auto* roof : drawn) {
        const auto* dram = roofs.dram_for(*roof);
        const double peak = roof->per_s / axes.scale;
        if (dram) {
            s += fmt::format("r{}(x) = x * {:.17g} < {:.17g} ? x * {:.17g} : {:.17g}\n", index,
                             dram->bytes_per_s / axes.scale, peak, dram->bytes_per_s / axes.scale, peak);
        } else {
            s += fmt::format("r{}(x) = {:.17g}\n", index, peak);
        }
        plots.push_back(fmt::format("r{}(x) with lines lw 2 dt {} lc rgb '{}' title {}", index,
                                    roof->origin == RoofOrigin::measured ? 1 : 2, color(roof->precision),
                                    gnuplot_quote(roof_title(*roof, dram))));
        ++index;
    }
    double top_peak = 0;
    for (const auto* roof : drawn) top_peak = std::max(top_peak, roof->per_s / axes.scale);
    for (const auto& memory : roofs.memory) {
        if (memory.level != "L2") continue;
        const double l2 = memory.bytes_per_s / axes.scale;
        if (top_peak > 0) {
            s += fmt::format("l2(x) = x * {:.17g} < {:.17g} ? x * {:.17g} : {:.17g}\n", l2, top_peak, l2, top_peak);
        } else {
            s += fmt::format("l2(x) = x * {:.17g}\n", l2);
        }
        plots.push_back("l2(x) with lines lw 1 dt 3 lc rgb '#555555' title " +
                        gnuplot_quote("L2 measured " + devices::format_bandwidth(memory.bytes_per_s)));
    }
    if (!roofs.has_roofs()) {
        std::string why = roofs.notes.empty() ? "" : ": " + roofs.notes.front();
        s += "set label 1 " + gnuplot_quote(fmt::format("no roofs for {}{}", roofs.name, why)) +
             " at graph 0.5, 0.92 center font ',11'\n";
    }
    // One point set per precision, in its roofs' colour.
    std::map<std::string, DataBlock> blocks;
    int label = 10;
    for (const auto* p : points) {
        const std::string name = p->precision ? std::string(devices::precision_name(*p->precision)) : "other";
        auto& block = blocks.try_emplace(name, DataBlock{"points_" + name, {}}).first->second;
        block.rows.push_back({p->intensity, p->achieved_per_s / axes.scale});
        s += fmt::format("set label {} {} at {:.17g}, {:.17g} offset 0.8, 0.6 font ',9'\n", label++,
                         gnuplot_quote(point_label(*p)), p->intensity, p->achieved_per_s / axes.scale);
    }
    for (const auto& [name, block] : blocks) {
        s += gnuplot_datablock(block);
        const auto precision = devices::parse_precision(name);
        plots.push_back(fmt::format("${} using 1:2 with points pt 7 ps 1.4 lc rgb '{}' title {}", block.name,
                                    precision ? color(*precision) : "#000000",
                                    gnuplot_quote(name + " benchmarks (achieved)")));
    }
    if (plots.empty()) plots.push_back("NaN notitle");
    s += "plot " + join(plots, ", \\\n     ") + "\n";
    return s;
}

std::vector<std::filesystem::path> draw_rooflines(const devices::RooflineSet& set, const std::filesystem::path& dir,
                                                  std::span<const ImageFormat> formats, const PlotSize& size) {
    std::filesystem::create_directories(dir);
    std::vector<std::filesystem::path> files;
    std::set<std::string> names;
    for (std::size_t d = 0; d < set.devices.size(); ++d) {
        const bool has_points =
            std::any_of(set.points.begin(), set.points.end(), [&](const auto& p) { return p.device == d; });
        if (!has_points) continue;
        std::string stem =
            "roofline-" + sanitize_file_part(set.devices[d].key.empty() ? set.devices[d].name : set.devices[d].key);
        for (int n = 2; names.contains(stem); ++n) stem = fmt::format("{}-{}", stem, n);
        names.insert(stem);
        for (const ImageFormat format : formats) {
            const auto file = dir / (stem + "." + std::string(extension(format)));
            run_gnuplot(roofline_script(set, d, format, size, file), file);
            files.push_back(file);
        }
    }
    return files;
}

}  // namespace inferbench::report
