#include "report/roofline_plot.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "core/units.hpp"
#include "devices/quantities.hpp"
#include "report/roofline_view.hpp"
#include "report/selection.hpp"

namespace inferbench::report {
namespace {

using devices::RoofOrigin;

// `key`: where the legend goes ("top left").
std::string head(const std::string& title, const RooflineAxes& axes, std::string_view key, ImageFormat format,
                 const PlotSize& size, const std::filesystem::path& output) {
    std::string s = gnuplot_terminal(format, size, output);
    s += "set title " + gnuplot_quote(title) + "\n";
    s += fmt::format("set logscale xy\nset grid xtics ytics mxtics mytics lc rgb '#dddddd'\nset key inside {} opaque "
                     "box lc rgb '#cccccc' font ',9'\nset samples 2000\n",
                     key);
    s += "set xlabel 'arithmetic intensity (FLOP per byte; OP per byte for int8)'\n";
    s += "set ylabel " + gnuplot_quote(axes.unit) + "\n";
    s += fmt::format("set xrange [{:g}:{:g}]\nset yrange [{:g}:{:g}]\n", axes.x_min, axes.x_max,
                     axes.y_min / axes.scale, axes.y_max / axes.scale);
    return s;
}

// The drawn compute roofs (each with its DRAM slope) and the measured L2 roof: their functions go into the
// script, their plot clauses into `plots`.
std::string roof_lines(const devices::DeviceRoofs& roofs, const std::vector<const devices::ComputeRoof*>& drawn,
                       const RooflineAxes& axes, std::vector<std::string>& plots) {
    std::string s;
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
                                    roof->origin == RoofOrigin::measured ? 1 : 2, precision_colour(roof->precision),
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
    return s;
}

std::string device_label(const devices::DeviceRoofs& roofs) { return roofs.key.empty() ? roofs.name : roofs.key; }

bool near(double a, double b) { return std::abs(a - b) <= 0.1 * std::max(a, b); }

// Points that fall on one spot of a log-log plot (within 10% on both axes), as indices in `points`.
template <typename Point>
std::vector<std::vector<std::size_t>> spots_of(const std::vector<const Point*>& points) {
    std::vector<std::vector<std::size_t>> spots;
    for (std::size_t i = 0; i < points.size(); ++i) {
        auto it = std::find_if(spots.begin(), spots.end(), [&](const auto& spot) {
            return near(points[spot[0]]->intensity, points[i]->intensity) &&
                   near(points[spot[0]]->achieved_per_s, points[i]->achieved_per_s);
        });
        if (it == spots.end()) spots.push_back({i});
        else it->push_back(i);
    }
    return spots;
}

// Text lines below the plot, in one or two columns (`set label`s from number `first` on), and the bottom
// margin that makes room for them. Lines past the room are summed up in a last one.
std::string legend_below(std::vector<std::string> lines, const PlotSize& size, int first) {
    const double line = 16.0 * size.dpi / 96.0 / size.height_px;  // one 8 pt line, as a fraction of the height
    const std::size_t columns = lines.size() > 8 ? 2 : 1;
    const auto max_rows = static_cast<std::size_t>(0.4 / line);
    if (lines.size() > max_rows * columns) {
        const std::size_t kept = max_rows * columns - 1;
        const std::size_t more = lines.size() - kept;
        lines.resize(kept);
        lines.push_back(fmt::format("... {} more: see the roofline table", more));
    }
    const std::size_t rows = (lines.size() + columns - 1) / columns;
    const double top = 0.02 + static_cast<double>(rows) * line;
    std::string s = fmt::format("set bmargin at screen {:.4f}\n", top + 0.09);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const double x = 0.02 + 0.5 * static_cast<double>(i / rows);
        const double y = top - static_cast<double>(i % rows) * line;
        s += fmt::format("set label {} {} at screen {:.4f}, {:.4f} left font ',8'\n", first + static_cast<int>(i),
                         gnuplot_quote(lines[i]), x, y);
    }
    return s;
}

// Drawn in a layer figure: a cost, FLOPs and a time (a log-log plot has no place for zeros).
}  // namespace

std::string roofline_script(const analysis::RooflineSet& set, std::size_t device, ImageFormat format,
                            const PlotSize& size, const std::filesystem::path& output) {
    const devices::DeviceRoofs& roofs = set.devices.at(device);
    const auto points = device_points(set, device);
    const auto drawn = drawn_roofs(roofs, points);
    const RooflineAxes axes = roofline_axes(roofs, drawn, points);
    std::string s = head(fmt::format("Roofline: {} (datasheet or estimated roofs dashed, measured solid)", roofs.name),
                         axes, "top left", format, size, output);
    std::vector<std::string> plots;
    s += roof_lines(roofs, drawn, axes, plots);
    // One point set per precision, in its roofs' colour.
    std::map<std::string, DataBlock> blocks;
    for (const auto* p : points) {
        const std::string name = p->precision ? std::string(devices::precision_name(*p->precision)) : "other";
        auto& block = blocks.try_emplace(name, DataBlock{"points_" + name, {}}).first->second;
        block.rows.push_back({p->intensity, p->achieved_per_s / axes.scale});
    }
    // Each point numbered beside it (points on one spot share a label, "2,3"), the numbers explained
    // below the plot: whole labels beside crowded points pile into one blob.
    std::vector<std::string> legend = estimated_roof_notes(roofs, drawn);
    int label = 10;
    for (const auto& spot : spots_of(points)) {
        std::vector<std::string> numbers;
        for (const auto i : spot) {
            numbers.push_back(std::to_string(i + 1));
            legend.push_back(fmt::format("{}  {}", i + 1, point_label(*points[i])));
        }
        const auto* p = points[spot[0]];
        s += fmt::format("set label {} {} at {:.17g}, {:.17g} offset 0.7, 0.5 font ',9'\n", label++,
                         gnuplot_quote(join(numbers, ",")), p->intensity, p->achieved_per_s / axes.scale);
    }
    s += legend_below(legend, size, label);
    for (const auto& [name, block] : blocks) {
        s += gnuplot_datablock(block);
        const auto precision = devices::parse_precision(name);
        plots.push_back(fmt::format("${} using 1:2 with points pt 7 ps 1.4 lc rgb '{}' title {}", block.name,
                                    precision ? precision_colour(*precision) : "#000000",
                                    gnuplot_quote(name + " benchmarks (achieved)")));
    }
    if (plots.empty()) plots.push_back("NaN notitle");
    s += "plot " + join(plots, ", \\\n     ") + "\n";
    return s;
}

std::vector<std::filesystem::path> draw_rooflines(const analysis::RooflineSet& set, const std::filesystem::path& dir,
                                                  std::span<const ImageFormat> formats, const PlotSize& size) {
    std::filesystem::create_directories(dir);
    std::vector<std::filesystem::path> files;
    std::set<std::string> names;
    for (std::size_t d = 0; d < set.devices.size(); ++d) {
        if (device_points(set, d).empty()) continue;
        std::string stem = "roofline-" + bounded_file_part(sanitize_file_part(device_label(set.devices[d])));
        for (int n = 2; names.contains(stem); ++n) stem = fmt::format("{}-{}", stem, n);
        names.insert(stem);
        for (const ImageFormat format : formats) {
            const auto file = dir / (stem + "." + std::string(extension(format)));
            OutputFile output(file);
            run_gnuplot(roofline_script(set, d, format, size, output.staging_path()), output);
            files.push_back(file);
        }
    }
    return files;
}

std::string layer_roofline_script(const analysis::RooflineSet& set, const analysis::LayerSet& layers,
                                  std::size_t labelled, ImageFormat format, const PlotSize& size,
                                  const std::filesystem::path& output) {
    const analysis::RooflinePoint& point = set.points.at(layers.point);
    const devices::DeviceRoofs& roofs = set.devices.at(point.device);
    std::vector<const analysis::LayerPoint*> placed;
    for (const auto& layer : layers.layers)
        if (drawable_layer(layer)) placed.push_back(&layer);
    const auto drawn = drawn_roofs(roofs, {&point});
    const RooflineAxes axes = layer_roofline_axes(set, layers, placed);

    double drawn_share = 0;
    for (const auto* p : placed) drawn_share += p->share_pct;
    std::string s = head(fmt::format("Layers of {} ({}, {}): {} of {} layers drawn, {:.0f}% of the profiled time",
                                     point.label, point.benchmark.backend, device_label(roofs), placed.size(),
                                     layers.layers.size(), drawn_share),
                         axes, "bottom right", format, size, output);
    std::vector<std::string> plots;
    s += roof_lines(roofs, drawn, axes, plots);

    // One point set per op type, the op types with the most time first.
    const auto ops = op_types_by_time(placed);
    for (std::size_t i = 0; i < ops.size(); ++i) {
        DataBlock block{fmt::format("op{}", i), {}};
        std::size_t count = 0;
        for (const auto* p : placed) {
            if (p->layer.op_type != ops[i].first) continue;
            block.rows.push_back({p->intensity, p->achieved_per_s / axes.scale});
            ++count;
        }
        s += gnuplot_datablock(block);
        plots.push_back(fmt::format("${} using 1:2 with points pt 7 ps 1.1 lc rgb '{}' title {}", block.name,
                                    op_colour(i),
                                    gnuplot_quote(fmt::format("{} ({} layer{}, {:.0f}% of the time)", ops[i].first,
                                                              count, count == 1 ? "" : "s", ops[i].second))));
    }
    // The slowest layers named; those that fall on one spot (within 10%, as repeated blocks do) share
    // one label with their summed share of the time.
    std::vector<const analysis::LayerPoint*> slowest = placed;
    std::stable_sort(slowest.begin(), slowest.end(),
                     [](const auto* a, const auto* b) { return a->layer.total_ns > b->layer.total_ns; });
    slowest.resize(std::min(slowest.size(), labelled));
    std::vector<std::vector<const analysis::LayerPoint*>> spots;
    for (const auto& spot : spots_of(slowest)) {
        auto& named = spots.emplace_back();
        for (const auto i : spot) named.push_back(slowest[i]);
    }
    int label = 10;
    for (const auto& spot : spots) {
        double share = 0;
        for (const auto* p : spot) share += p->share_pct;
        const std::string names = spot.size() == 1
                                      ? spot[0]->layer.node
                                      : fmt::format("{} and {} alike", spot[0]->layer.node, spot.size() - 1);
        // Above and below their points in turn, so that labels of neighbouring points overlap less.
        s += fmt::format("set label {} {} at {:.17g}, {:.17g} offset 0.6, {} font ',8'\n", label,
                         gnuplot_quote(fmt::format("{} {:.1f}%", names, share)), spot[0]->intensity,
                         spot[0]->achieved_per_s / axes.scale, label % 2 == 0 ? "0.5" : "-0.6");
        ++label;
    }
    s += gnuplot_datablock({"whole", {{point.intensity, point.achieved_per_s / axes.scale}}});
    plots.push_back("$whole using 1:2 with points pt 3 ps 2.2 lw 2 lc rgb '#000000' title " +
                    gnuplot_quote("whole model, " + point_label(point)));
    s += "plot " + join(plots, ", \\\n     ") + "\n";
    return s;
}

std::vector<std::filesystem::path> draw_layer_rooflines(const analysis::RooflineSet& set,
                                                        std::span<const analysis::LayerSet> layers,
                                                        const std::filesystem::path& dir,
                                                        std::span<const ImageFormat> formats, std::size_t labelled,
                                                        const PlotSize& size) {
    std::filesystem::create_directories(dir);
    std::vector<std::filesystem::path> files;
    for (const auto& one : layers) {
        const auto& b = set.points.at(one.point).benchmark;
        const std::string stem = bounded_file_part(
            sanitize_file_part(fmt::format("roofline-layers-{}-{}-b{}", b.benchmark_id, b.model, b.batch_size)));
        for (const ImageFormat format : formats) {
            const auto file = dir / (stem + "." + std::string(extension(format)));
            OutputFile output(file);
            run_gnuplot(layer_roofline_script(set, one, labelled, format, size, output.staging_path()), output);
            files.push_back(file);
        }
    }
    return files;
}

}  // namespace inferbench::report
