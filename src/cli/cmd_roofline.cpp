// `inferbench roofline`: where each stored benchmark sits under its device's roofs (datasheet and
// measured), as a table and, with --out, one log-log figure per device.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/filter_args.hpp"
#include "core/error.hpp"
#include "core/settings.hpp"
#include "core/units.hpp"
#include "devices/catalog.hpp"
#include "devices/quantities.hpp"
#include "devices/roofline.hpp"
#include "report/roofline_plot.hpp"
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
    std::vector<std::string> formats = {"png", "svg"};
    bool json = false;
};


report::Cell tera(const std::optional<devices::Placement>& p) {
    return p ? report::Cell(p->attainable_per_s / 1e12) : report::Cell(report::Null{});
}
report::Cell percent(const std::optional<devices::Placement>& p) {
    return p ? report::Cell(p->percent) : report::Cell(report::Null{});
}
report::Cell bound(const std::optional<devices::Placement>& p) {
    return p ? report::Cell(std::string(devices::bound_name(p->bound))) : report::Cell(report::Null{});
}

report::Table points_table(const devices::RooflineSet& set) {
    report::Table table{"roofline",
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
        const auto& device = set.devices[p.device];
        table.rows.push_back({p.benchmark.benchmark_id, device.key.empty() ? device.name : device.key, p.label,
                              p.benchmark.backend, p.intensity, std::string(p.integer ? "TOPS" : "TFLOP/s"),
                              p.achieved_per_s / 1e12, tera(p.datasheet), percent(p.datasheet), bound(p.datasheet),
                              tera(p.measured), percent(p.measured), bound(p.measured), join(p.notes, "; ")});
    }
    return table;
}

report::Table roofs_table(const devices::RooflineSet& set) {
    report::Table table{"roofs",
                        {{"device", "device"},
                         {"roof", "roof"},
                         {"origin", "origin"},
                         {"value", "value"},
                         {"ridge_op_per_byte", "ridge FLOP/B", 1},
                         {"what", "what"}},
                        {}};
    for (const auto& d : set.devices) {
        const std::string name = d.key.empty() ? d.name : d.key;
        for (const auto& m : d.memory)
            table.rows.push_back({name, m.level, std::string(devices::origin_name(m.origin)),
                                  devices::format_bandwidth(m.bytes_per_s), report::Null{}, m.what});
        for (const auto& c : d.compute) {
            const auto* dram = d.dram_for(c);
            table.rows.push_back(
                {name, std::string(devices::precision_name(c.precision)), std::string(devices::origin_name(c.origin)),
                 devices::format_rate(c.per_s, devices::is_integer(c.precision)),
                 dram ? report::Cell(devices::ridge_point(c.per_s, dram->bytes_per_s)) : report::Cell(report::Null{}),
                 c.what});
        }
    }
    return table;
}

int execute(const RooflineArgs& args) {
    const auto filter = cleaned_filter(args.filter, args.batches);
    const auto formats = image_formats(args.formats);
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    if (!std::filesystem::exists(path))
        throw UserError(
            fmt::format("{}: no results database here; run `inferbench run` first or pass --db PATH", path));
    const auto results = store::ResultsStore::open(path);
    const auto catalog = devices::load_catalog();
    const auto benchmarks = report::select_benchmarks(results, filter);
    const auto set = devices::roofline_points(results, benchmarks, catalog, {args.roofs});
    std::vector<std::filesystem::path> files;
    if (!args.out.empty() && !set.points.empty()) files = report::draw_rooflines(set, args.out, formats);
    std::vector<std::string> notes;
    for (const auto& d : set.devices) {
        for (const auto& note : d.notes) notes.push_back(fmt::format("{}: {}", d.key.empty() ? d.name : d.key, note));
    }
    if (args.json) {
        nlohmann::ordered_json doc{{"schema_version", report::kJsonSchemaVersion}};
        doc["points"] = nlohmann::ordered_json::parse(report::render(points_table(set), report::Format::json))["rows"];
        doc["roofs"] = nlohmann::ordered_json::parse(report::render(roofs_table(set), report::Format::json))["rows"];
        doc["notes"] = notes;
        doc["skipped"] = set.skipped;
        doc["files"] = nlohmann::ordered_json::array();
        for (const auto& f : files) doc["files"].push_back(f.string());
        std::cout << doc.dump(2) << "\n";
        return kExitOk;
    }
    if (set.points.empty()) {
        fmt::print("no benchmark could be placed:\n");
    } else {
        std::cout << report::render(points_table(set), report::Format::text) << "\n"
                  << report::render(roofs_table(set), report::Format::text);
    }
    for (const auto& note : notes) fmt::print("note: {}\n", note);
    for (const auto& skipped : set.skipped) fmt::print("skipped {}\n", skipped);
    for (const auto& file : files) fmt::print("wrote {}\n", file.string());
    if (args.out.empty() && !set.points.empty()) fmt::print("add --out DIR to draw the roofline figures\n");
    return kExitOk;
}

}  // namespace

void add_roofline_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<RooflineArgs>();
    CLI::App* cmd = app.add_subcommand(
        "roofline",
        "place stored benchmarks under their device's roofs (datasheet and measured): intensity, achieved "
        "FLOP/s, % of attainable, memory- or compute-bound; figures with --out");
    cmd->add_option("--db", args->db, "results database (default inferbench-results/results.db)");
    cmd->add_option("--run", args->filter.runs, "run ids (3 or 3,5), latest or all")->capture_default_str();
    cmd->add_option("--device", args->filter.devices, "only these devices, comma-separated")->delimiter(',');
    cmd->add_option("--model", args->filter.models, "only these models")->delimiter(',');
    cmd->add_option("--backend", args->filter.backends, "only these backends")->delimiter(',');
    cmd->add_option("--precision", args->filter.precisions, "only these precisions")->delimiter(',');
    cmd->add_option("--batch", args->batches, "only these batch sizes, e.g. 1,8")->delimiter(',');
    cmd->add_option(
        "--roofs", args->roofs,
        "catalog entry (see `inferbench devices`) for GPU benchmarks of runs that did not record their GPU");
    cmd->add_option("--out", args->out, "folder for the figures (roofline-<device>.png/.svg); none without it");
    cmd->add_option("--format", args->formats, "figure formats: png, svg")->delimiter(',')->capture_default_str();
    cmd->add_flag("--json", args->json, "print JSON (points, roofs, notes, skipped, files)");
    cmd->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
