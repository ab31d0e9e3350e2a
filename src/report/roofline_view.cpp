#include "report/roofline_view.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/run_context.hpp"
#include "core/units.hpp"
#include "devices/quantities.hpp"

namespace inferbench::report {
namespace {

using devices::Precision;
using devices::RoofOrigin;

double decade_below(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_above(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

// One unit per table for the rates: TFLOP/s where any rate reaches 1 TFLOP/s, else GFLOP/s (OPS for
// integer precisions), so that a column never mixes units.
struct RateUnit {
    double scale = 1e12;
    std::string_view name(bool integer) const {
        if (scale == 1e12) return integer ? "TOPS" : "TFLOP/s";
        return integer ? "GOPS" : "GFLOP/s";
    }
};

RateUnit rate_unit_for(double highest_per_s) { return {highest_per_s >= 1e12 ? 1e12 : 1e9}; }

RateUnit points_unit(const analysis::RooflineSet& set) {
    double highest = 0;
    for (const auto& p : set.points) {
        highest = std::max(highest, p.achieved_per_s);
        for (const auto& placement : {p.datasheet, p.measured})
            if (placement) highest = std::max(highest, placement->attainable_per_s);
    }
    return rate_unit_for(highest);
}

Cell rate(const std::optional<devices::Placement>& p, const RateUnit& unit) {
    return p ? Cell(p->attainable_per_s / unit.scale) : Cell(Null{});
}
Cell percent(const std::optional<devices::Placement>& p) { return p ? Cell(p->percent) : Cell(Null{}); }
Cell bound(const std::optional<devices::Placement>& p) {
    return p ? Cell(std::string(devices::bound_name(p->bound))) : Cell(Null{});
}

// The bound under the measured roofs where there are some, else under the datasheet's.
Cell layer_bound(const analysis::LayerPoint& p) {
    const auto& placement = p.measured ? p.measured : p.datasheet;
    return placement ? Cell(std::string(devices::bound_name(placement->bound))) : Cell(Null{});
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

// Appends a point to a series of points in ascending x. A chart's x values are unique per series, so a
// point at the x of the one before it (layers of one kind, a benchmark measured twice) goes a hair to
// its right: 10 ppm, invisible on a log axis, and the tables carry the exact values.
void add_point(ChartSeries& series, double x, double y, std::string label) {
    if (!series.x.empty() && x <= series.x.back()) x = series.x.back() * (1 + 1e-5);
    series.x.push_back(x);
    series.y.push_back(y);
    series.point_labels.push_back(std::move(label));
}

// Beside a point in the interactive chart, where many points crowd: "b128 36%" (the model too where
// the device ran several); the colour gives the precision, the table below the rest.
std::string short_point_label(const analysis::RooflinePoint& p, bool with_model) {
    const auto& placement = p.measured ? p.measured : p.datasheet;
    std::string label = fmt::format("{}b{}", with_model ? p.benchmark.model + " " : "", p.benchmark.batch_size);
    if (placement) label += placement->percent < 9.95 ? fmt::format(" {:.1f}%", placement->percent)
                                                       : fmt::format(" {:.0f}%", placement->percent);
    return label;
}

// The drawn compute roofs (each with its DRAM slope; datasheet dashed, measured solid) and the measured
// L2 roof, as line series of `chart`.
void add_roof_series(Chart& chart, const devices::DeviceRoofs& roofs, const std::vector<const devices::ComputeRoof*>& drawn,
                     const RooflineAxes& axes) {
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

std::vector<const analysis::RooflinePoint*> device_points(const analysis::RooflineSet& set, std::size_t device) {
    std::vector<const analysis::RooflinePoint*> points;
    for (const auto& p : set.points)
        if (p.device == device) points.push_back(&p);
    return points;
}

std::vector<const devices::ComputeRoof*> drawn_roofs(const devices::DeviceRoofs& roofs,
                                                     const std::vector<const analysis::RooflinePoint*>& points) {
    std::set<Precision> wanted;
    for (const auto* p : points)
        if (p->precision) wanted.insert(*p->precision);
    std::vector<const devices::ComputeRoof*> drawn;
    for (const auto& roof : roofs.compute)
        if (wanted.empty() || wanted.contains(roof.precision)) drawn.push_back(&roof);
    return drawn;
}

RooflineAxes roofline_axes(const devices::DeviceRoofs& roofs, const std::vector<const devices::ComputeRoof*>& drawn,
                           const std::vector<const analysis::RooflinePoint*>& points) {
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

std::vector<std::string> estimated_roof_notes(const devices::DeviceRoofs& roofs,
                                              const std::vector<const devices::ComputeRoof*>& drawn) {
    std::vector<std::string> notes;
    for (const auto* roof : drawn) {
        if (roof->origin != RoofOrigin::estimated) continue;
        const bool probed = roofs.compute_roof(roof->precision, true) != nullptr;
        notes.push_back(
            fmt::format("{} {} roof is an estimate ({}), not a datasheet or measured figure: a point "
                        "above it means the estimate is low{}",
                        device_name(roofs), devices::precision_name(roof->precision), roof->what,
                        probed ? "; the measured roof is drawn beside it" : "; `inferbench probe` measures the roofs"));
    }
    return notes;
}

std::string point_label(const analysis::RooflinePoint& p) {
    const auto& placement = p.measured ? p.measured : p.datasheet;
    if (!placement) return p.label;
    return fmt::format("{}: {:.0f}% of {} ({})", p.label, placement->percent, devices::origin_name(placement->origin),
                       devices::bound_name(placement->bound));
}

Table roofline_points_table(const analysis::RooflineSet& set) {
    Table table{"roofline",
                {{"benchmark_id", "id", 0},
                 {"device", "device", 2, Fit::wrap},
                 {"point", "benchmark", 2, Fit::wrap},
                 {"backend", "backend", 2, Fit::keep, 2},
                 {"intensity_op_per_byte", "FLOP/B", 2},
                 {"unit", "unit"},
                 {"achieved", "achieved", 3},
                 // Narrow: the attainable rates go first, then the datasheet's share and bound
                 // where measured ones say the same; memory- or compute-bound stays longest.
                 {"attainable_datasheet", "attainable (sheet)", 3, Fit::keep, 3},
                 {"of_datasheet_pct", "% (sheet)", 1, Fit::keep, 1},
                 {"bound_datasheet", "bound (sheet)", 2, Fit::keep, 1},
                 {"attainable_measured", "attainable (measured)", 3, Fit::keep, 3},
                 {"of_measured_pct", "% (measured)", 1},
                 {"bound_measured", "bound (measured)", 2},
                 {"notes", "notes", 2, Fit::footnote}},
                {}};
    const RateUnit unit = points_unit(set);
    for (const auto& p : set.points) {
        table.rows.push_back({p.benchmark.benchmark_id, device_name(set.devices[p.device]), p.label,
                              p.benchmark.backend, p.intensity, std::string(unit.name(p.integer)),
                              p.achieved_per_s / unit.scale, rate(p.datasheet, unit), percent(p.datasheet),
                              bound(p.datasheet), rate(p.measured, unit), percent(p.measured), bound(p.measured),
                              join(p.notes, "; ")});
    }
    return table;
}

Table roofline_roofs_table(const analysis::RooflineSet& set) {
    Table table{"roofs",
                {{"device", "device", 2, Fit::wrap},
                 {"roof", "roof"},
                 {"origin", "origin"},
                 {"value", "value"},
                 {"ridge_op_per_byte", "ridge FLOP/B", 1, Fit::keep, 1},
                 {"what", "what", 2, Fit::wrap}},
                {}};
    double highest = 0;
    for (const auto& d : set.devices)
        for (const auto& c : d.compute) highest = std::max(highest, c.per_s);
    const RateUnit unit = rate_unit_for(highest);
    for (const auto& d : set.devices) {
        for (const auto& m : d.memory)
            table.rows.push_back({device_name(d), m.level, std::string(devices::origin_name(m.origin)),
                                  devices::format_bandwidth(m.bytes_per_s), Null{}, m.what});
        for (const auto& c : d.compute) {
            const auto* dram = d.dram_for(c);
            table.rows.push_back({device_name(d), std::string(devices::precision_name(c.precision)),
                                  std::string(devices::origin_name(c.origin)),
                                  fmt::format("{:.4g} {}", c.per_s / unit.scale,
                                              unit.name(devices::is_integer(c.precision))),
                                  dram ? Cell(devices::ridge_point(c.per_s, dram->bytes_per_s)) : Cell(Null{}), c.what});
        }
    }
    return table;
}

// The `top` slowest layers (all for 0), slowest first.
std::vector<const analysis::LayerPoint*> slowest_layers(const analysis::LayerSet& layers, std::size_t top) {
    std::vector<const analysis::LayerPoint*> rows;
    for (const auto& layer : layers.layers) rows.push_back(&layer);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto* a, const auto* b) { return a->layer.total_ns > b->layer.total_ns; });
    if (top > 0 && rows.size() > top) rows.resize(top);
    return rows;
}

Table roofline_layers_table(const analysis::RooflinePoint& point, const analysis::LayerSet& layers, std::size_t top) {
    Table table{"layers",
                        {{"layer", "#", 0},
                         {"node", "node", 2, Fit::wrap},
                         {"op_type", "op"},
                         {"provider", "provider", 2, Fit::keep, 1},
                         {"calls", "calls", 0},
                         {"mean_ms", "mean"},
                         {"share_pct", "share %", 1},
                         {"intensity_op_per_byte", "FLOP/B", 2},
                         {"achieved", "achieved", 2},
                         {"unit", "unit"},
                         {"of_datasheet_pct", "% (sheet)", 1},
                         {"of_measured_pct", "% (measured)", 1},
                         {"bound", "bound"},
                         {"note", "note", 2, Fit::footnote}},
                        {}};
    double highest = 0;
    for (const auto* p : slowest_layers(layers, top)) highest = std::max(highest, p->achieved_per_s);
    const RateUnit rates = rate_unit_for(highest);
    const std::string unit(rates.name(point.integer));
    for (const auto* p : slowest_layers(layers, top)) {
        const auto order = static_cast<std::int64_t>(p - layers.layers.data());
        const bool rated = p->costed && p->achieved_per_s > 0;
        table.rows.push_back({order, p->layer.node, p->layer.op_type, p->layer.provider, p->layer.calls,
                              Duration{p->mean_ns}, p->share_pct,
                              p->costed && p->bytes > 0 ? Cell(p->intensity) : Cell(Null{}),
                              rated ? Cell(p->achieved_per_s / rates.scale) : Cell(Null{}),
                              rated ? Cell(unit) : Cell(Null{}), percent(p->datasheet),
                              percent(p->measured), layer_bound(*p), p->note});
    }
    return table;
}

// "benchmark 3, mobilenet b1 fp32 (onnxruntime on cpu)"
std::string roofline_benchmark_title(const analysis::RooflinePoint& point) {
    return fmt::format("benchmark {}, {} ({} on {})", point.benchmark.benchmark_id, point.label,
                       point.benchmark.backend, point.benchmark.device);
}

// What the reader of one benchmark's layers should know: what is left out and why, and how to get more.
std::vector<std::string> roofline_layer_notes(const analysis::RooflinePoint& point, const analysis::LayerSet& layers) {
    std::vector<std::string> notes = layers.notes;
    if (layers.uncosted > 0 && point.benchmark.backend == "onnxruntime") {
        const OptionMap options = analysis::cell_settings(point.benchmark).backend_option_values;
        const auto it = options.find("graph_optimization");
        const std::string level = it != options.end() ? it->second : "all";
        if (level != "basic" && level != "disable")
            notes.push_back(fmt::format("ONNX Runtime ran it at graph_optimization {}, which fuses and renames "
                                        "nodes; at basic (--set backend_options.onnxruntime.graph_optimization=basic) "
                                        "it keeps the model's node names but skips the fusions and layout changes "
                                        "that make {} faster",
                                        level, level));
    }
    return notes;
}


bool drawable_layer(const analysis::LayerPoint& p) { return p.costed && p.intensity > 0 && p.achieved_per_s > 0; }

std::vector<std::pair<std::string, double>> op_types_by_time(const std::vector<const analysis::LayerPoint*>& layers) {
    std::map<std::string, double> share;
    for (const auto* p : layers) share[p->layer.op_type] += p->share_pct;
    std::vector<std::pair<std::string, double>> ops(share.begin(), share.end());
    std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return ops;
}

std::string_view op_colour(std::size_t k) {
    static constexpr std::string_view kOpColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                                      "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
    return kOpColours[k % std::size(kOpColours)];
}

RooflineAxes layer_roofline_axes(const analysis::RooflineSet& set, const analysis::LayerSet& layers,
                                 const std::vector<const analysis::LayerPoint*>& placed) {
    const analysis::RooflinePoint& point = set.points.at(layers.point);
    const devices::DeviceRoofs& roofs = set.devices.at(point.device);
    std::vector<analysis::RooflinePoint> extent(placed.size());
    for (std::size_t i = 0; i < placed.size(); ++i) {
        extent[i].intensity = placed[i]->intensity;
        extent[i].achieved_per_s = placed[i]->achieved_per_s;
    }
    std::vector<const analysis::RooflinePoint*> covered = {&point};
    for (const auto& e : extent) covered.push_back(&e);
    return roofline_axes(roofs, drawn_roofs(roofs, {&point}), covered);
}

Chart roofline_layers_chart(const analysis::RooflineSet& set, const analysis::LayerSet& layers, std::size_t labelled) {
    const analysis::RooflinePoint& point = set.points.at(layers.point);
    const devices::DeviceRoofs& roofs = set.devices.at(point.device);
    std::vector<const analysis::LayerPoint*> placed;
    for (const auto& layer : layers.layers)
        if (drawable_layer(layer)) placed.push_back(&layer);
    const RooflineAxes axes = layer_roofline_axes(set, layers, placed);
    double drawn_share = 0;
    for (const auto* p : placed) drawn_share += p->share_pct;
    Chart chart{.title = fmt::format("Layers of {} ({}): {} of {} layers drawn, {:.0f}% of the profiled time",
                                     point.label, point.benchmark.backend, placed.size(), layers.layers.size(),
                                     drawn_share),
                .x_label = "arithmetic intensity (FLOP per byte; OP per byte for int8)",
                .y_label = axes.unit,
                .type = ChartType::line,
                .x_log = true,
                .y_log = true,
                .log_base = 10};
    add_roof_series(chart, roofs, drawn_roofs(roofs, {&point}), axes);
    std::vector<const analysis::LayerPoint*> named = placed;
    std::stable_sort(named.begin(), named.end(),
                     [](const auto* a, const auto* b) { return a->layer.total_ns > b->layer.total_ns; });
    if (named.size() > labelled) named.resize(labelled);
    const auto ops = op_types_by_time(placed);
    for (std::size_t k = 0; k < ops.size(); ++k) {
        std::vector<const analysis::LayerPoint*> of_op;
        for (const auto* p : placed)
            if (p->layer.op_type == ops[k].first) of_op.push_back(p);
        std::stable_sort(of_op.begin(), of_op.end(), [](const auto* a, const auto* b) { return a->intensity < b->intensity; });
        ChartSeries series{.label = fmt::format("{} ({:.0f}% of the time)", ops[k].first, ops[k].second),
                           .type = ChartType::points};
        series.colour = op_colour(k);
        for (const auto* p : of_op) {
            const bool name_it = std::find(named.begin(), named.end(), p) != named.end();
            add_point(series, p->intensity, p->achieved_per_s / axes.scale,
                      name_it ? fmt::format("{} {:.1f}%", p->layer.node, p->share_pct) : "");
        }
        chart.series.push_back(std::move(series));
    }
    return chart;
}

Chart roofline_chart(const analysis::RooflineSet& set, std::size_t device) {
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
    add_roof_series(chart, roofs, drawn, axes);
    // One series of points per precision, ascending in intensity.
    std::set<std::string> models;
    for (const auto* p : points) models.insert(p->benchmark.model);
    const bool several_models = models.size() > 1;
    std::map<std::string, ChartSeries> by_precision;
    std::vector<const analysis::RooflinePoint*> sorted = points;
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->intensity < b->intensity; });
    for (const auto* p : sorted) {
        const std::string name = p->precision ? std::string(devices::precision_name(*p->precision)) : "other";
        auto [it, added] = by_precision.try_emplace(name, ChartSeries{.label = name + " benchmarks (achieved)",
                                                                      .type = ChartType::points});
        if (added) it->second.colour = p->precision ? std::string(precision_colour(*p->precision)) : "#000000";
        add_point(it->second, p->intensity, p->achieved_per_s / axes.scale, short_point_label(*p, several_models));
    }
    for (auto& [name, series] : by_precision) chart.series.push_back(std::move(series));
    return chart;
}

}  // namespace inferbench::report
