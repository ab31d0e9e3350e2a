// `inferbench roofline`: where each stored benchmark sits under its device's roofs (datasheet and
// measured), as a table and, with --out, one log-log figure per device; with --layers, where each of a
// benchmark's layers sits, for benchmarks with stored per-layer times (onnxruntime's layer_profile).
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/roofline_placement.hpp"
#include "cli/commands.hpp"
#include "cli/filter_args.hpp"
#include "core/error.hpp"
#include "core/plan/settings.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"
#include "devices/catalog.hpp"
#include "devices/quantities.hpp"
#include "report/report_data.hpp"
#include "report/roofline_plot.hpp"
#include "report/roofline_view.hpp"
#include "report/selection.hpp"
#include "report/table.hpp"

namespace inferbench::cli {
namespace {

struct RooflineArgs {
    std::string db;
    report::ReportFilter filter;
    std::vector<std::string> batches;
    std::string roofs;
    std::string out;
    ImageFormatArgs formats;
    bool json = false;
    bool layers = false;
    bool quiet = false;
    std::size_t top = 10;
};

// Layers labelled in a layer figure: the slowest, at most this many.
constexpr std::size_t kMaxLabelledLayers = 8;

nlohmann::ordered_json rows_json(const report::Table& table) {
    return report::table_json(table)["rows"];
}

// What the roofline computed, for either output.
struct RooflineResult {
    analysis::RooflineSet set;
    std::vector<analysis::LayerSet> layer_sets;
    std::vector<std::filesystem::path> files;
    std::vector<std::string> notes;
};

// The devices' notes, and with --layers which placed benchmarks have no layer times (and how to store them).
std::vector<std::string> roofline_notes(const RooflineArgs& args, const analysis::RooflineSet& set,
                                        const std::vector<analysis::LayerSet>& layer_sets) {
    std::vector<std::string> notes;
    for (const auto& d : set.devices) {
        for (const auto& note : d.notes) notes.push_back(fmt::format("{}: {}", d.key.empty() ? d.name : d.key, note));
    }
    if (!args.layers) return notes;
    std::vector<std::string> without_layers;
    for (const auto& p : set.points) {
        const bool has = std::any_of(layer_sets.begin(), layer_sets.end(),
                                     [&](const auto& l) { return &set.points[l.point] == &p; });
        if (!has) without_layers.push_back(std::to_string(p.benchmark.benchmark_id));
    }
    if (!without_layers.empty())
        notes.push_back(fmt::format("no layer times stored for benchmark(s) {}: a backend stores them when its "
                                    "layer_profile option asks, e.g. --set "
                                    "backend_options.onnxruntime.layer_profile=N (N profiled iterations after "
                                    "the measured ones)",
                                    join(without_layers, ", ")));
    return notes;
}

RooflineResult compute_roofline(const RooflineArgs& args) {
    const auto filter = cleaned_filter(args.filter, args.batches);
    const auto formats = image_formats(args.formats, "roofline");
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    if (store::store_file_missing(path))
        throw UserError(
            fmt::format("{}: no results database here; run `inferbench run` first or pass --db PATH", path));
    const auto results = store::ResultsStore::open(path, store::ResultsStore::Access::read);
    const auto catalog = devices::load_catalog();
    const auto benchmarks = report::select_benchmarks(results, filter);
    const auto summaries = report::load_selection(results, benchmarks).summaries();
    RooflineResult r;
    r.set = analysis::roofline_points(results, summaries, catalog, {args.roofs});
    if (args.layers) r.layer_sets = analysis::roofline_layers(results, r.set);
    if (!args.out.empty() && !r.set.points.empty()) r.files = report::draw_rooflines(r.set, args.out, formats);
    if (!args.out.empty() && !r.layer_sets.empty()) {
        const std::size_t labelled = std::min(args.top == 0 ? kMaxLabelledLayers : args.top, kMaxLabelledLayers);
        const auto drawn = report::draw_layer_rooflines(r.set, r.layer_sets, args.out, formats, labelled);
        r.files.insert(r.files.end(), drawn.begin(), drawn.end());
    }
    r.notes = roofline_notes(args, r.set, r.layer_sets);
    return r;
}

void print_json(const RooflineArgs& args, const RooflineResult& r) {
    nlohmann::ordered_json doc{{"schema_version", report::kJsonSchemaVersion}};
    doc["points"] = rows_json(report::roofline_points_table(r.set));
    doc["roofs"] = rows_json(report::roofline_roofs_table(r.set));
    if (args.layers) {
        doc["layers"] = nlohmann::ordered_json::array();
        for (const auto& l : r.layer_sets) {
            const auto& point = r.set.points[l.point];
            doc["layers"].push_back({{"benchmark_id", point.benchmark.benchmark_id},
                                     {"point", point.label},
                                     {"layers", l.layers.size()},
                                     {"profiled_ms", ns_to_ms(l.total_ns)},
                                     {"uncosted", l.uncosted},
                                     {"uncosted_share_pct", l.uncosted_share_pct},
                                     {"notes", report::roofline_layer_notes(point, l)},
                                     {"rows", rows_json(report::roofline_layers_table(point, l, args.top))}});
        }
    }
    doc["notes"] = r.notes;
    doc["skipped"] = r.set.skipped;
    doc["files"] = nlohmann::ordered_json::array();
    for (const auto& f : r.files) doc["files"].push_back(f.string());
    std::cout << doc.dump(2) << "\n";
}

// One benchmark's slowest layers: a line that says how many of how many, then their table and notes.
void print_layers(const RooflineArgs& args, const analysis::RooflinePoint& point, const analysis::LayerSet& l,
                  const OutputOptions& output) {
    const auto shown = report::slowest_layers(l, args.top);
    double shown_share = 0;
    for (const auto* p : shown) shown_share += p->share_pct;
    double per_run_ns = 0;
    for (const auto& layer : l.layers) per_run_ns += layer.mean_ns;
    std::cout << "\n";
    print_wrapped(fmt::format("layers of {}: {} layers, their mean times sum to {}; {}:",
                              report::roofline_benchmark_title(point), l.layers.size(), format_latency(per_run_ns),
                              shown.size() == l.layers.size()
                                  ? std::string("all of them, slowest first")
                                  : fmt::format("the {} slowest ({:.1f}% of the time)", shown.size(), shown_share)));
    print_table(report::roofline_layers_table(point, l, args.top), output);
    if (args.quiet) return;
    for (const auto& note : report::roofline_layer_notes(point, l)) print_wrapped("note: " + note);
}

void print_text(const RooflineArgs& args, const RooflineResult& r) {
    const auto& set = r.set;
    OutputOptions output;  // the terminal's width, every column with a value
    if (set.points.empty()) {
        fmt::print("no benchmark could be placed:\n");
    } else {
        print_table(report::roofline_points_table(set), output);
        std::cout << "\n";
        print_table(report::roofline_roofs_table(set), output);
    }
    for (std::size_t d = 0; d < set.devices.size(); ++d)
        for (const auto& note : report::estimated_roof_notes(
                 set.devices[d], report::drawn_roofs(set.devices[d], report::device_points(set, d))))
            if (!args.quiet) print_wrapped("note: " + note);
    for (const auto& l : r.layer_sets) print_layers(args, set.points[l.point], l, output);
    if (!r.layer_sets.empty()) fmt::print("\n");
    if (args.quiet) return;
    for (const auto& note : r.notes) print_wrapped("note: " + note);
    for (const auto& skipped : set.skipped) print_wrapped("skipped " + skipped);
    for (const auto& file : r.files) fmt::print("wrote {}\n", file.string());
    if (args.out.empty() && !set.points.empty()) fmt::print("add --out DIR to draw the roofline figures\n");
}

int execute(const RooflineArgs& args) {
    const RooflineResult r = compute_roofline(args);
    if (args.json)
        print_json(args, r);
    else
        print_text(args, r);
    return kExitOk;
}

}  // namespace

void add_roofline_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<RooflineArgs>();
    CLI::App* cmd = app.add_subcommand(
        "roofline",
        "place stored benchmarks under their device's roofs (datasheet and measured): intensity, achieved "
        "FLOP/s, % of attainable, memory- or compute-bound; per layer with --layers; figures with --out");
    add_db_option(*cmd, args->db);
    add_selection_options(*cmd, args->filter, args->batches);
    cmd->add_option(
        "--roofs", args->roofs,
        "catalog entry (see `inferbench devices`) for GPU benchmarks of runs that did not record their GPU");
    cmd->add_option("--out", args->out, "folder for the figures (roofline-<device>.png/.svg); none without it");
    add_image_format_option(*cmd, args->formats);
    cmd->add_flag("--layers", args->layers,
                  "per layer too, for benchmarks with stored layer times (a backend's layer_profile option): a "
                  "table of the slowest layers and, with --out, one figure per benchmark");
    cmd->add_option("--top", args->top, "layers shown per benchmark with --layers, slowest first; 0 = all")
        ->capture_default_str();
    cmd->add_flag("--json", args->json, "print JSON (points, roofs, layers, notes, skipped, files)");
    cmd->add_flag("--quiet", args->quiet, "the tables only: no notes, skipped benchmarks or written files");
    cmd->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
