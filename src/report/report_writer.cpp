#include "report/report_writer.hpp"

#include <algorithm>
#include <future>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "devices/catalog.hpp"
#include "findings/findings.hpp"
#include "report/fleet_comparison.hpp"
#include "report/generation_plots.hpp"
#include "report/generation_rows.hpp"
#include "report/generation_workbook.hpp"
#include "report/serving_plots.hpp"
#include "report/serving_rows.hpp"
#include "report/pipeline_plots.hpp"
#include "report/pipeline_rows.hpp"
#include "report/pipeline_workbook.hpp"
#include "report/serving_workbook.hpp"
#include "report/html_page.hpp"
#include "report/html_report.hpp"
#include "report/report_charts.hpp"
#include "analysis/repeats.hpp"
#include "report/summary_table.hpp"

namespace inferbench::report {
namespace {

// The device catalog the layer rules place layers under; a devices file that cannot be read costs the
// layers' roofs, not the report.
std::optional<devices::Catalog> catalog_or_none() {
    try {
        return devices::load_catalog();
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::size_t group_iterations(const ReportGroup& group) {
    std::size_t rows = 0;
    for (const auto& b : group.benchmarks) rows += b.iterations.capacity();
    return rows;
}

// The findings' part of the report: each group's ok benchmarks as evidence, each judged by the rules of one
// benchmark while it holds a copy of that benchmark's rows (the group keeps its own for the workbooks and
// figures), then kept without rows for the rules across benchmarks (the page's Findings section).
struct ReportFindings {
    std::vector<findings::BenchmarkEvidence> evidence;
    std::vector<findings::BenchmarkFindings> own;  // own[i]: evidence[i]'s rules of one benchmark
    std::size_t most_iterations_held = 0;
};

// Appends the group's ok benchmarks to `found`; returns the index of the first.
std::size_t add_evidence(const store::ResultsStore& results, const ReportGroup& group,
                         const std::optional<devices::Catalog>& catalog, ReportFindings& found) {
    auto& evidence = found.evidence;
    const std::size_t first = evidence.size();
    std::vector<const ReportBenchmark*> judged;
    for (const auto& b : group.benchmarks) {
        if (b.summary.benchmark.status != BenchmarkStatus::ok) continue;
        evidence.push_back(findings::evidence_without_rows(b.summary, b.iterations, b.metrics, b.cpu));
        // A serving cell's requests, for the rules on them (read here again: the summary read them once, keeping none).
        if (evidence.back().serving()) evidence.back().requests = results.served_requests(b.summary.benchmark.benchmark_id);
        judged.push_back(&b);
    }
    const std::span<findings::BenchmarkEvidence> added(evidence.begin() + static_cast<std::ptrdiff_t>(first), evidence.end());
    if (catalog) findings::add_layer_sets(results, added, *catalog);
    // Generative benchmarks' bounds, and the group's cells that ran out of memory (failed ones included).
    std::vector<store::BenchmarkRecord> records;
    for (const auto& b : group.benchmarks) records.push_back(b.summary.benchmark);
    if (catalog) findings::add_generation_evidence(results, added, records, *catalog);
    const std::size_t group_rows = group_iterations(group);
    found.most_iterations_held = std::max(found.most_iterations_held, group_rows + findings::iterations_held(evidence));
    for (std::size_t i = 0; i < judged.size(); ++i) {
        findings::attach_rows(added[i], judged[i]->iterations, judged[i]->gpu, judged[i]->cpu);
        found.most_iterations_held =
            std::max(found.most_iterations_held, group_rows + findings::iterations_held(evidence));
        found.own.push_back(findings::benchmark_findings(added[i]));
        findings::release_rows(added[i]);
    }
    return first;
}

// The findings of one group, for its workbook's sheet; its evidence stays in `found` for the page.
std::vector<findings::Finding> group_findings(const store::ResultsStore& results, const ReportGroup& group,
                                              const std::optional<devices::Catalog>& catalog, ReportFindings& found) {
    const auto first = static_cast<std::ptrdiff_t>(add_evidence(results, group, catalog, found));
    return findings::explain(
        std::span<const findings::BenchmarkEvidence>(found.evidence.begin() + first, found.evidence.end()),
        std::span<const findings::BenchmarkFindings>(found.own.begin() + first, found.own.end()));
}

}  // namespace

ReportResult write_report(const store::ResultsStore& results, const ReportOptions& options) {
    const auto selected = select_benchmarks(results, options.filter);
    if (options.plots && !gnuplot_available())
        throw EnvironmentError(
            "gnuplot not found: install Debian's gnuplot-nox (scripts/setup.sh does), set "
            "INFERBENCH_GNUPLOT to a gnuplot executable, or pass --no-plots");
    const auto& dir = options.out_dir;
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error)
        throw EnvironmentError(fmt::format("{}: cannot create the report folder: {}", dir.string(), error.message()));
    remove_stale_staging(dir);

    // One pass over the store: each group's rows are read once and drawn into every output that needs
    // them (workbooks and figures on the chosen clock, the page's charts from zero), then released.
    // The findings read the same rows: each group's become the evidence of its ok benchmarks (its
    // workbook's Findings sheet), and all of them the page's Findings section.
    ReportFiles group_files;
    ChartSpool charts;  // the page's charts, each group's drawn while its rows are held, kept on disk
    ReportFindings found;
    const std::optional<devices::Catalog> catalog = catalog_or_none();
    GenerationStepsWorkbook generation_steps(dir / "generation-steps.xlsx", options.excel_options);
    std::map<std::int64_t, std::int64_t> server_gpus;
    // gnuplot draws a group's figures on the second core while this thread makes its findings and
    // workbooks (which read the group too, and change nothing in it until the figures are drawn).
    const auto selection = load_selection(results, selected, [&](ReportGroup& group) {
        if (options.html) charts.add(group.title, group_charts(group));
        add_server_gpus(group, server_gpus);
        if (options.excel || options.plots) set_clock(group, options.clock_from_zero);
        std::future<ReportFiles> figures;
        if (options.plots)
            figures = std::async(std::launch::async, [&] { return write_group_plots(group, dir, options.plot); });
        if (options.excel) {
            ExcelOptions excel_options = options.excel_options;
            excel_options.findings = group_findings(results, group, catalog, found);
            group_files.add(write_excel_workbooks(group, dir, excel_options));
            generation_steps.add(group);
        }
        if (options.plots) group_files.add(figures.get());
        if (!options.excel) add_evidence(results, group, catalog, found);
    });
    const auto summaries = selection.summaries();
    const std::vector<findings::Finding> all_findings = findings::explain(found.evidence, found.own);

    ReportResult result;
    result.most_iterations_held = found.most_iterations_held;
    const auto cells = analysis::combine_cells(summaries);
    result.summary = summary_table(cells);
    const std::vector<GenerationRow> generation = generation_rows(results, cells, catalog);
    for (const auto& [name, format] : {std::pair{"summary.md", Format::markdown}, std::pair{"summary.csv", Format::csv},
                                       std::pair{"summary.json", Format::json}}) {
        write_text_file(dir / name, render(result.summary, format));
        result.files.written.push_back(dir / name);
    }
    if (!generation.empty()) {  // the generative cells' own table beside the summary, as `summary` prints it
        const Table table = generation_report_table(generation);
        for (const auto& [name, format] : {std::pair{"generation.md", Format::markdown},
                                           std::pair{"generation.csv", Format::csv}, std::pair{"generation.json", Format::json}}) {
            write_text_file(dir / name, render(table, format));
            result.files.written.push_back(dir / name);
        }
    }
    // Several hosts' or GPUs' benchmarks: the same cells side by side, as `compare` puts them.
    const auto side_by_side = report_comparison(results.path().string(), selection.runs, cells);
    result.files.add(write_comparison_files(side_by_side, dir, options.excel));
    const auto sweeps = sweep_views(serving_cells(cells, server_gpus));
    if (const Table serving = serving_table(cells); !serving.rows.empty()) {  // the serving cells' own tables
        const Table sweep = sweep_table(sweeps);
        for (const auto& [stem, table] : {std::pair{"serving", &serving}, std::pair{"serving-sweep", &sweep}}) {
            if (table->rows.empty()) continue;
            for (const auto& [extension, format] : {std::pair{"md", Format::markdown}, std::pair{"csv", Format::csv},
                                                    std::pair{"json", Format::json}}) {
                const auto file = dir / fmt::format("{}.{}", stem, extension);
                write_text_file(file, render(*table, format));
                result.files.written.push_back(file);
            }
        }
    }
    if (const Table pipeline = pipeline_table(cells); !pipeline.rows.empty()) {  // the pipeline cells' own tables
        const Table stages = pipeline_stage_table(cells);
        for (const auto& [stem, table] : {std::pair{"pipeline", &pipeline}, std::pair{"pipeline-stages", &stages}})
            for (const auto& [extension, format] : {std::pair{"md", Format::markdown}, std::pair{"csv", Format::csv},
                                                    std::pair{"json", Format::json}}) {
                const auto file = dir / fmt::format("{}.{}", stem, extension);
                write_text_file(file, render(*table, format));
                result.files.written.push_back(file);
            }
    }
    result.files.add(std::move(group_files));
    if (options.excel) result.files.add(generation_workbook_files(generation, generation_steps, dir));
    if (options.excel) result.files.add(pipeline_workbook_files(cells, dir));
    if (options.plots) result.files.add(write_pipeline_plots(cells, dir, options.plot));
    if (options.plots)
        result.files.add(write_throughput_latency_plots(group_benchmarks(selected), summaries, dir, options.plot));
    if (options.plots) result.files.add(write_generation_plots(generation, dir, options.plot));
    if (options.excel) result.files.add(serving_workbook_files(results, cells, sweeps, dir));
    if (options.plots) result.files.add(write_serving_plots(sweeps, dir, options.plot));
    if (options.html) {
        write_html_report(dir / "report.html", selection, charts, roofline_section(results, summaries), all_findings,
                          generation, sweeps, side_by_side ? &*side_by_side : nullptr);
        result.files.written.push_back(dir / "report.html");
    }
    return result;
}

}  // namespace inferbench::report
