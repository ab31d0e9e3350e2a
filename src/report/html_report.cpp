#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/units.hpp"
#include "core/version.hpp"
#include "report/findings_section.hpp"
#include "report/fleet_comparison.hpp"
#include "devices/catalog.hpp"
#include "analysis/repeats.hpp"
#include "analysis/telemetry_summary.hpp"
#include "report/cost_figure.hpp"
#include "report/generation_section.hpp"
#include "report/serving_section.hpp"
#include "report/pipeline_section.hpp"
#include "report/html_page.hpp"
#include "report/scenario_section.hpp"
#include "report/report_charts.hpp"
#include "report/report_data.hpp"
#include "report/roofline_view.hpp"
#include "report/summary_table.hpp"
#include "report/table.hpp"

namespace inferbench::report {
namespace {

Cell optional_cell(const std::optional<double>& value, double scale = 1.0) {
    return value ? Cell{*value * scale} : Cell{Null{}};
}

Table overview_table(const ReportSelection& data, const std::vector<analysis::BenchmarkSummary>& summaries) {
    const bool several_runs = data.runs.size() > 1;
    Table table;
    table.name = "benchmarks";
    if (several_runs) table.columns.push_back({"run_id", "run"});
    const std::vector<Column> columns = {{"benchmark_ids", "id"},
                                         {"model", "model"},
                                         {"backend", "backend"},
                                         {"device", "device"},
                                         {"precision", "precision"},
                                         {"batch_size", "batch"},
                                         {"variant", "options"},
                                         {"status", "status"},
                                         {"mean_ms", "mean"},
                                         {"mean_ci95_half_ms", "±95%"},
                                         {"convergence", "stop"},
                                         {"p50_ms", "p50"},
                                         {"p99_ms", "p99"},
                                         {"throughput_per_s", "inf/s", 1},
                                         {"power_w", "power W", 1},
                                         {"millijoules_per_inference", "mJ/inf", 2},
                                         {"millijoules_per_inference_net", "mJ/inf net", 2},
                                         {"throttle_flagged_pct", "flagged %", 1},
                                         {"inferences_per_joule", "inf/J", 2},
                                         {"model_size_mb", "size MB", 1},
                                         {"gflops_per_inference", "GFLOP/inf", 2}};
    table.columns.insert(table.columns.end(), columns.begin(), columns.end());
    // A merged or shared store's rows: which host and GPU each comes from, beside the device.
    const bool origins = several_origins(summaries);
    if (origins) {
        const auto device = std::find_if(table.columns.begin(), table.columns.end(),
                                         [](const Column& c) { return c.key == "device"; }) + 1;
        table.columns.insert(device, {Column{"host", "host"}, Column{"device_name", "device name"}});
    }
    const bool repeated = std::any_of(summaries.begin(), summaries.end(), [](const auto& s) { return s.repeats > 1; });
    if (repeated) table.columns.push_back({"repeats", "repeats"});
    // The load scenario, where a benchmark ran one (every run since scenarios exist; not imported logs).
    const bool scenarios = std::any_of(summaries.begin(), summaries.end(),
                                       [](const auto& s) { return !s.scenario.label.empty(); });
    if (scenarios)
        for (Column column : {Column{"scenario", "scenario"}, Column{"result", "result"},
                              Column{"queue_p99_ms", "queue p99"}})
            table.columns.push_back(std::move(column));
    for (const auto& s : summaries) {
        const auto& b = s.benchmark;
        const bool measured = s.e2e.count > 0;
        const auto timing = [&](double ns) { return analysis::has_latency(s) ? Cell{Duration{ns}} : Cell{Null{}}; };
        std::vector<Cell> row;
        if (several_runs) row.emplace_back(b.run_id);
        std::vector<Cell> cells = {
            benchmark_ids_cell(s),
            b.model,
            b.backend,
            b.device,
            b.precision,
            b.batch_size,
            b.variant,
            std::string(to_string(b.status)),
            timing(s.e2e.mean),
            s.ci.mean ? Cell{Duration{s.ci.mean->half_width()}} : Cell{Null{}},
            b.status == BenchmarkStatus::skipped ? Cell{Null{}} : Cell{std::string(convergence_label(b.convergence))},
            timing(s.e2e.p50),
            timing(s.e2e.p99),
            measured || s.throughput_per_s > 0 ? Cell{s.throughput_per_s} : Cell{Null{}},
            optional_cell(s.telemetry.mean_power_w),
            optional_cell(s.telemetry.joules_per_inference, 1e3),
            optional_cell(s.telemetry.joules_per_inference_net, 1e3),
            optional_cell(s.throttle ? s.throttle->flagged_share() : std::nullopt, 100.0),
            optional_cell(s.telemetry.inferences_per_joule),
            b.model_size_bytes ? Cell{static_cast<double>(*b.model_size_bytes) * 1e-6} : Cell{Null{}},
            gflops_cell(s.model)};
        if (origins) {  // after id, model, backend, device
            const std::vector<Cell> origin = {s.run.host.empty() ? Cell{Null{}} : Cell{s.run.host}, s.run.device_name};
            cells.insert(cells.begin() + 4, origin.begin(), origin.end());
        }
        row.insert(row.end(), cells.begin(), cells.end());
        if (repeated) row.emplace_back(s.repeats);
        if (scenarios) {
            const auto& sc = s.scenario;
            const std::string verdict = verdict_word(sc.verdict);
            row.push_back(sc.label.empty() ? Cell{Null{}} : Cell{sc.label});
            row.push_back(verdict.empty() ? Cell{Null{}} : Cell{verdict});
            row.push_back(sc.queue ? Cell{Duration{sc.queue->p99}} : Cell{Null{}});
        }
        table.rows.push_back(std::move(row));
    }
    return table;
}

std::string benchmark_name(const store::BenchmarkRecord& b, bool several_runs) {
    std::string name = fmt::format("{} · {} · {} · {} · b{}", b.model, b.backend, b.device, b.precision, b.batch_size);
    if (!b.variant.empty()) name += " · " + b.variant;
    if (several_runs) name += fmt::format(" · run {}", b.run_id);
    return name;
}

// Benchmarks named in one grouped warning before "and N more".
constexpr std::size_t kNamedPerWarning = 6;

// "text: 18 benchmarks (a; b; ... and 12 more)", "text: every benchmark" where it concerns all `total` of
// them (a source missing on the host), or "a: text" for one benchmark.
std::string grouped_line(const std::string& text, const std::vector<std::string>& names, std::size_t total) {
    if (names.size() == total && total > 1) return fmt::format("{}: every benchmark ({})", text, total);
    if (names.size() == 1) return fmt::format("{}: {}", names.front(), text);
    std::vector<std::string> shown(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(
                                                                     std::min(names.size(), kNamedPerWarning)));
    std::string list = join(shown, "; ");
    if (names.size() > shown.size()) list += fmt::format("; and {} more", names.size() - shown.size());
    return fmt::format("{}: {} benchmarks ({})", text, names.size(), list);
}

// Failure reasons, warnings (timing, throttling) and unavailable telemetry sources: each text once,
// with the benchmarks it concerns (a source missing on this host is missing for every benchmark).
std::vector<std::string> warning_lines(const ReportSelection& data,
                                       const std::vector<analysis::BenchmarkSummary>& summaries) {
    const bool several_runs = data.runs.size() > 1;
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    const auto add = [&](const std::string& text, const std::string& name) {
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == text; });
        if (it == groups.end()) it = groups.insert(groups.end(), {text, {}});
        it->second.push_back(name);
    };
    for (const auto& s : summaries) {
        const std::string name = benchmark_name(s.benchmark, several_runs);
        if (s.benchmark.status != BenchmarkStatus::ok)
            add(fmt::format("{}{}", to_string(s.benchmark.status), s.benchmark.reason.empty() ? "" : ": " + s.benchmark.reason),
                name);
        for (const auto& warning : s.warnings) add(warning, name);
        for (const auto& note : s.scenario.notes()) add(note, name);
        for (const auto& source : s.telemetry.sources)
            if (source.status != "ok" && analysis::source_concerns_device(source.source, s.benchmark.device))
                add(fmt::format("telemetry source {} {}{}", source.source, source.status,
                                source.detail.empty() ? "" : ": " + source.detail),
                    name);
    }
    std::vector<std::string> lines;
    for (const auto& [text, names] : groups) lines.push_back(grouped_line(text, names, summaries.size()));
    return lines;
}

void runs_part(HtmlPage& page, const ReportSelection& data) {
    page.open_section(data.runs.size() == 1 ? "Run" : "Runs", "runs");
    for (const auto& run : data.runs) {
        if (data.runs.size() > 1) page.heading(3, fmt::format("Run {} {}", run.run_id, run.name));
        std::vector<std::pair<std::string, std::string>> entries = {
            {"run", fmt::format("{}{}", run.run_id, run.name.empty() ? "" : " (" + run.name + ")")},
            {"status", std::string(to_string(run.status))},
            {"started", format_utc(run.started_unix_ms)},
        };
        if (run.ended_unix_ms) entries.emplace_back("ended", format_utc(*run.ended_unix_ms));
        entries.insert(entries.end(), {{"host", run.host},
                                       {"git commit", run.git_commit},
                                       {"inferbench version", run.inferbench_version},
                                       {"results", data.source}});
        page.definition_list(entries);
        const auto environment = nlohmann::json::parse(run.environment_json, nullptr, false);
        if (environment.is_object() && !environment.empty()) {
            page.open_details(fmt::format("Environment of run {}", run.run_id));
            page.definition_list(json_entries(environment));
            page.close_details();
        }
    }
    page.close_section();
}

void charts_part(HtmlPage& page, const std::vector<ChartGroup>& groups) {
    for (const auto& group : groups) {
        if (group.charts.empty()) continue;
        page.open_section(group.title);
        page.raw("<div class=\"charts\">\n");
        for (const auto& chart : group.charts) page.chart(chart);
        page.raw("</div>\n");
        page.close_section();
    }
}

// Per benchmark with layer times: the slowest layers named in its chart, and listed in its table.
constexpr std::size_t kNamedLayers = 8;
constexpr std::size_t kTabledLayers = 15;

void roofline_part(HtmlPage& page, const RooflineSection& roofline) {
    const auto& set = roofline.set;
    if (roofline.unavailable.empty() && set.points.empty() && set.skipped.empty()) return;
    page.open_section("Roofline", "roofline");
    if (!roofline.unavailable.empty()) {
        page.paragraph("Not drawn: " + roofline.unavailable, "muted");
        page.close_section();
        return;
    }
    page.paragraph(
        "Each benchmark at its arithmetic intensity (the model's FLOPs over the bytes it moves per inference, "
        "from the cost model: every node reads its inputs and weights and writes its outputs once, no fusion, "
        "no cache reuse; bytes scaled to the precision) and its achieved rate (FLOPs per inference x inferences "
        "per second), under its device's roofs: attainable = min(peak, intensity x DRAM bandwidth). Datasheet "
        "peaks are dense; measured roofs are those `inferbench probe` stored. Below the ridge point a benchmark "
        "is memory-bound, above it compute-bound. Drag to zoom; labels give % of the attainable rate.",
        "hint");
    for (std::size_t d = 0; d < set.devices.size(); ++d) {
        if (device_points(set, d).empty()) continue;
        const auto& device = set.devices[d];
        page.heading(3, device.identified_by.empty() ? device.name
                                                     : fmt::format("{} ({})", device.name, device.identified_by));
        page.chart(roofline_chart(set, d));
        auto notes = estimated_roof_notes(device, drawn_roofs(device, device_points(set, d)));
        notes.insert(notes.end(), device.notes.begin(), device.notes.end());
        if (!notes.empty()) page.list(notes);
    }
    if (!set.points.empty()) page.table(roofline_points_table(set));
    if (!set.devices.empty()) {
        page.open_details("Roofs of each device");
        page.table(roofline_roofs_table(set));
        page.close_details();
    }
    if (!set.skipped.empty()) {
        page.paragraph("Not placed:");
        page.list(set.skipped);
    }
    for (const auto& layers : roofline.layers) {
        const auto& point = set.points.at(layers.point);
        page.heading(3, "Layers of " + roofline_benchmark_title(point));
        page.paragraph(fmt::format("{} layers from the backend's separate profiled run (layer_profile); each costed "
                                   "layer at its node's FLOPs over its bytes (the whole batch) and its mean time. "
                                   "On a GPU that run is eager, without a CUDA graph: launch gaps count in small "
                                   "layers' times. The {} slowest are named; the table lists the {} slowest.",
                                   layers.layers.size(), kNamedLayers, kTabledLayers),
                       "hint");
        page.chart(roofline_layers_chart(set, layers, kNamedLayers));
        page.table(roofline_layers_table(point, layers, kTabledLayers));
        if (const auto notes = roofline_layer_notes(point, layers); !notes.empty()) page.list(notes);
    }
    page.close_section();
}

std::string page_title(const ReportSelection& data) {
    if (data.runs.size() == 1) {
        const auto& run = data.runs.front();
        return fmt::format("inferbench report: run {}{}", run.run_id, run.name.empty() ? "" : " " + run.name);
    }
    return fmt::format("inferbench report: {} runs", data.runs.size());
}

}  // namespace

namespace {

// Everything of the page; `charts` adds the groups' charts in their place.
void fill_page(HtmlPage& page, const ReportSelection& data, const std::function<void(HtmlPage&)>& charts,
               const RooflineSection& roofline, const std::vector<findings::Finding>& found,
               std::span<const GenerationRow> generation, std::span<const SweepView> sweeps, const Comparison* side_by_side) {
    const auto summaries = data.summaries();
    runs_part(page, data);

    page.open_section("Benchmarks", "benchmarks");
    if (summaries.empty())
        page.paragraph("No benchmarks selected.", "muted");
    else {
        page.paragraph(
            "Click a column heading to sort. Latencies are end-to-end; power and energy are the GPU's "
            "during the measured iterations. ±95%: half the 95% confidence interval of the mean (batch means of "
            "one run's iterations, or Student t over a cell's repeats, whose means the row shows); stop: whether "
            "the stopping criterion converged (fixed: a fixed duration).",
            "hint");
        page.table(without_empty_columns(overview_table(data, analysis::combine_cells(summaries))));
    }
    page.close_section();

    if (side_by_side) comparison_section(page, *side_by_side);
    generation_section(page, generation);
    serving_section(page, analysis::combine_cells(summaries), sweeps);
    pipeline_section(page, analysis::combine_cells(summaries));
    scenario_section(page, summaries);
    // After the results it explains, grouped by rule: a long list of findings no longer hides them.
    findings_section(page, found);

    page.open_section("Warnings and failures", "warnings");
    const auto warnings = warning_lines(data, summaries);
    if (warnings.empty())
        page.paragraph("None.", "muted");
    else
        page.list(warnings);
    page.close_section();

    roofline_part(page, roofline);
    charts(page);
    page.paragraph(fmt::format("Written by inferbench {} ({}). Charts: drag to zoom, double-click to reset.", kVersion,
                               kGitCommit),
                   "hint");
}

}  // namespace

std::string render_html_report(const ReportSelection& data, const std::vector<ChartGroup>& groups,
                               const RooflineSection& roofline, const std::vector<findings::Finding>& found,
                               std::span<const GenerationRow> generation, std::span<const SweepView> sweeps,
                               const Comparison* side_by_side) {
    HtmlPage page(page_title(data));
    fill_page(
        page, data, [&](HtmlPage& p) { charts_part(p, groups); }, roofline, found, generation, sweeps, side_by_side);
    return page.finish();
}

void write_html_report(const std::filesystem::path& file, const ReportSelection& data, const ChartSpool& charts,
                       const RooflineSection& roofline, const std::vector<findings::Finding>& found,
                       std::span<const GenerationRow> generation, std::span<const SweepView> sweeps,
                       const Comparison* side_by_side) {
    HtmlPage page(page_title(data));
    fill_page(
        page, data, [&](HtmlPage& p) { p.spooled_charts(charts); }, roofline, found, generation, sweeps, side_by_side);
    page.write_file(file);
}

RooflineSection roofline_section(const store::ResultsStore& results,
                                 std::span<const analysis::BenchmarkSummary> summaries) {
    RooflineSection roofline;
    try {
        roofline.set = analysis::roofline_points(results, summaries, devices::load_catalog());
        roofline.layers = analysis::roofline_layers(results, roofline.set);
    } catch (const std::exception& e) {  // a broken devices file costs the section, not the report
        roofline.unavailable = e.what();
    }
    return roofline;
}

void write_html_report(const store::ResultsStore& results, const std::vector<store::BenchmarkRecord>& selected,
                       const std::filesystem::path& file, const std::vector<findings::Finding>& found) {
    ChartSpool charts;
    std::map<std::int64_t, std::int64_t> server_gpus;
    const auto selection = load_selection(results, selected, [&](const ReportGroup& group) {
        charts.add(group.title, group_charts(group));
        add_server_gpus(group, server_gpus);
    });
    const auto summaries = selection.summaries();
    std::optional<devices::Catalog> catalog;
    try {
        catalog = devices::load_catalog();
    } catch (const std::exception&) {  // a broken devices file costs the bounds (said as unknown), not the page
    }
    const auto cells = analysis::combine_cells(summaries);
    const auto generation = generation_rows(results, cells, catalog);
    const auto sweeps = sweep_views(serving_cells(cells, server_gpus));
    write_html_report(file, selection, charts, roofline_section(results, summaries), found, generation, sweeps);
}

}  // namespace inferbench::report
