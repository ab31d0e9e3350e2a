#include "report/roofline_view.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/units.hpp"
#include "devices/quantities.hpp"

namespace inferbench::report {
namespace {

using devices::Precision;
using devices::RoofOrigin;

double decade_below(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_above(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

Cell tera(const std::optional<devices::Placement>& p) { return p ? Cell(p->attainable_per_s / 1e12) : Cell(Null{}); }
Cell percent(const std::optional<devices::Placement>& p) { return p ? Cell(p->percent) : Cell(Null{}); }
Cell bound(const std::optional<devices::Placement>& p) {
    return p ? Cell(std::string(devices::bound_name(p->bound))) : Cell(Null{});
}

std::string device_name(const devices::DeviceRoofs& d) { return d.key.empty() ? d.name : d.key; }

// A roof as a polyline over [x_min, x_max]: the bandwidth slope up to the ridge point, then flat.
ChartSeries roof_series(std::string label, double peak, std::optional<double> bandwidth, const RooflineAxes& axes) {
    ChartSeries s{.label = std::move(label), .type = ChartType::line};
    const auto add = [&](double x) {
        const double y = bandwidth ? std::min(peak, x * *bandwidth) : peak;
        s.x.push_back(x);
        s.y.push_back(y / axes.scale);
    };
    add(axes.x_min);
    if (bandwidth) {
        const double ridge = peak / *bandwidth;
        if (ridge > axes.x_min && ridge < axes.x_max) add(ridge);
    }
    add(axes.x_max);
    return s;
}

// Beside a point in the interactive chart, where many points crowd: "b128 36%" (the model too where
// the device ran several); the colour gives the precision, the table below the rest.
std::string short_point_label(const devices::RooflinePoint& p, bool with_model) {
    const auto& placement = p.measured ? p.measured : p.datasheet;
    std::string label = fmt::format("{}b{}", with_model ? p.benchmark.model + " " : "", p.benchmark.batch_size);
    if (placement) label += placement->percent < 9.95 ? fmt::format(" {:.1f}%", placement->percent)
                                                       : fmt::format(" {:.0f}%", placement->percent);
    return label;
}

}  // namespace

std::string_view precision_colour(Precision precision) {
    switch (precision) {
        case Precision::fp64: return "#7f7f7f";
        case Precision::fp32: return "#1f77b4";
        case Precision::tf32: return "#17becf";
        case Precision::fp16: return "#2ca02c";
        case Precision::bf16: return "#9467bd";
        case Precision::fp8: return "#d62728";
        case Precision::int8: return "#ff7f0e";
        case Precision::int4: return "#8c564b";
    }
    return "#000000";
}

std::vector<const devices::RooflinePoint*> device_points(const devices::RooflineSet& set, std::size_t device) {
    std::vector<const devices::RooflinePoint*> points;
    for (const auto& p : set.points)
        if (p.device == device) points.push_back(&p);
    return points;
}

std::vector<const devices::ComputeRoof*> drawn_roofs(const devices::DeviceRoofs& roofs,
                                                     const std::vector<const devices::RooflinePoint*>& points) {
    std::set<Precision> wanted;
    for (const auto* p : points)
        if (p->precision) wanted.insert(*p->precision);
    std::vector<const devices::ComputeRoof*> drawn;
    for (const auto& roof : roofs.compute)
        if (wanted.empty() || wanted.contains(roof.precision)) drawn.push_back(&roof);
    return drawn;
}

RooflineAxes roofline_axes(const devices::DeviceRoofs& roofs, const std::vector<const devices::ComputeRoof*>& drawn,
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
    RooflineAxes axes;
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

Table roofline_points_table(const devices::RooflineSet& set) {
    Table table{"roofline",
                {{"benchmark_id", "id", 0},
                 {"device", "device"},
                 {"point", "benchmark"},
                 {"backend", "backend"},
                 {"intensity_op_per_byte", "FLOP/B", 2},
                 {"unit", "unit"},
                 {"achieved", "achieved", 3},
                 {"attainable_datasheet", "attainable (sheet)", 3},
                 {"of_datasheet_pct", "% (sheet)", 1},
                 {"bound_datasheet", "bound (sheet)"},
                 {"attainable_measured", "attainable (measured)", 3},
                 {"of_measured_pct", "% (measured)", 1},
                 {"bound_measured", "bound (measured)"},
                 {"notes", "notes"}},
                {}};
    for (const auto& p : set.points) {
        table.rows.push_back({p.benchmark.benchmark_id, device_name(set.devices[p.device]), p.label,
                              p.benchmark.backend, p.intensity, std::string(p.integer ? "TOPS" : "TFLOP/s"),
                              p.achieved_per_s / 1e12, tera(p.datasheet), percent(p.datasheet), bound(p.datasheet),
                              tera(p.measured), percent(p.measured), bound(p.measured), join(p.notes, "; ")});
    }
    return table;
}

Table roofline_roofs_table(const devices::RooflineSet& set) {
    Table table{"roofs",
                {{"device", "device"},
                 {"roof", "roof"},
                 {"origin", "origin"},
                 {"value", "value"},
                 {"ridge_op_per_byte", "ridge FLOP/B", 1},
                 {"what", "what"}},
                {}};
    for (const auto& d : set.devices) {
        for (const auto& m : d.memory)
            table.rows.push_back({device_name(d), m.level, std::string(devices::origin_name(m.origin)),
                                  devices::format_bandwidth(m.bytes_per_s), Null{}, m.what});
        for (const auto& c : d.compute) {
            const auto* dram = d.dram_for(c);
            table.rows.push_back({device_name(d), std::string(devices::precision_name(c.precision)),
                                  std::string(devices::origin_name(c.origin)),
                                  devices::format_rate(c.per_s, devices::is_integer(c.precision)),
                                  dram ? Cell(devices::ridge_point(c.per_s, dram->bytes_per_s)) : Cell(Null{}), c.what});
        }
    }
    return table;
}

Chart roofline_chart(const devices::RooflineSet& set, std::size_t device) {
    const devices::DeviceRoofs& roofs = set.devices.at(device);
    const auto points = device_points(set, device);
    const auto drawn = drawn_roofs(roofs, points);
    const RooflineAxes axes = roofline_axes(roofs, drawn, points);
    Chart chart{.title = fmt::format("Roofline: {} (datasheet or estimated roofs dashed, measured solid)", roofs.name),
                .x_label = "arithmetic intensity (FLOP per byte; OP per byte for int8)",
                .y_label = axes.unit,
                .type = ChartType::line,
                .x_log = true,
                .y_log = true,
                .log_base = 10};
    double top_peak = 0;
    for (const auto* roof : drawn) {
        const auto* dram = roofs.dram_for(*roof);
        ChartSeries s = roof_series(roof_title(*roof, dram), roof->per_s,
                                    dram ? std::optional<double>(dram->bytes_per_s) : std::nullopt, axes);
        s.colour = precision_colour(roof->precision);
        s.dashed = roof->origin != RoofOrigin::measured;
        chart.series.push_back(std::move(s));
        top_peak = std::max(top_peak, roof->per_s);
    }
    for (const auto& memory : roofs.memory) {
        if (memory.level != "L2" || top_peak <= 0) continue;
        ChartSeries s = roof_series("L2 " + std::string(devices::origin_name(memory.origin)) + " " +
                                        devices::format_bandwidth(memory.bytes_per_s),
                                    top_peak, memory.bytes_per_s, axes);
        s.colour = "#555555";
        s.dashed = true;
        chart.series.push_back(std::move(s));
    }
    // One series of points per precision, ascending in intensity; a point whose intensity another of
    // the series already has goes into a further series (a chart's x values are unique per series).
    std::set<std::string> models;
    for (const auto* p : points) models.insert(p->benchmark.model);
    const bool several_models = models.size() > 1;
    std::map<std::string, std::vector<ChartSeries>> by_precision;
    std::vector<const devices::RooflinePoint*> sorted = points;
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->intensity < b->intensity; });
    for (const auto* p : sorted) {
        const std::string name = p->precision ? std::string(devices::precision_name(*p->precision)) : "other";
        auto& list = by_precision[name];
        auto it = std::find_if(list.begin(), list.end(), [&](const ChartSeries& s) { return s.x.back() < p->intensity; });
        if (it == list.end()) {
            ChartSeries s{.label = list.empty() ? name + " benchmarks (achieved)"
                                                : fmt::format("{} benchmarks (achieved, {})", name, list.size() + 1),
                          .type = ChartType::points};
            s.colour = p->precision ? std::string(precision_colour(*p->precision)) : "#000000";
            list.push_back(std::move(s));
            it = std::prev(list.end());
        }
        it->x.push_back(p->intensity);
        it->y.push_back(p->achieved_per_s / axes.scale);
        it->point_labels.push_back(short_point_label(*p, several_models));
    }
    for (auto& [name, list] : by_precision)
        for (auto& s : list) chart.series.push_back(std::move(s));
    return chart;
}

}  // namespace inferbench::report
