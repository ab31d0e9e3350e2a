#include <optional>

#include <fmt/format.h>

#include "analysis/default_run.hpp"
#include "analysis/repeats.hpp"
#include "analysis/summary.hpp"
#include "cli/commands.hpp"
#include "cli/filter_args.hpp"
#include "core/error.hpp"
#include "core/plan/settings.hpp"
#include "core/units.hpp"
#include "analysis/roofline_placement.hpp"
#include "devices/catalog.hpp"
#include "report/generation_table.hpp"
#include "report/pipeline_rows.hpp"
#include "report/selection.hpp"
#include "report/serving_rows.hpp"
#include "report/summary_table.hpp"

namespace inferbench::cli {
namespace {

struct SummaryArgs {
    std::string db;
    std::string runs;  // a run id, ids "3,5", latest or all; empty: analysis::default_runs
    bool list_runs = false;
    bool each_repeat = false;
    OutputOptions output;
};

// The selected runs' benchmarks, summarized: one run through summarize_run, several (a merged or shared store's
// hosts) through the selection every reading command shares.
std::vector<analysis::BenchmarkSummary> summaries_of(const store::ResultsStore& results, const SummaryArgs& args) {
    std::string runs = args.runs;
    if (runs.empty()) {
        const auto choice = analysis::default_runs(results);
        if (!choice.note.empty() && !args.output.quiet) fmt::print(stderr, "inferbench: {}\n", choice.note);
        runs = choice.runs;
    }
    if (const auto id = parse_int(runs)) return analysis::summarize_run(results, *id);
    report::ReportFilter filter;
    filter.runs = runs;
    const auto stored_runs = results.runs();
    std::vector<analysis::BenchmarkSummary> summaries;
    for (const auto& b : report::select_benchmarks(results, filter))
        summaries.push_back(analysis::summarize_stored(results, b, stored_runs));
    return summaries;
}

int execute(const SummaryArgs& args) {
    report::parse_format(args.output.resolved());  // a bad --format fails before the database is read
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    if (store::store_file_missing(path))
        throw UserError(fmt::format("{}: no results database here; run `inferbench run` first or pass --db PATH", path));
    const auto results = store::ResultsStore::open(path, store::ResultsStore::Access::read);
    if (args.list_runs) {
        print_table(report::runs_table(results.runs()), args.output);
        return kExitOk;
    }
    const auto summaries = summaries_of(results, args);
    if (args.each_repeat) print_summary_tables(results, summaries, args.output, report::SummaryRows::each_repeat);
    else print_summary_tables(results, analysis::combine_cells(summaries), args.output);
    return kExitOk;
}

}  // namespace

namespace {

// The serving cells' table and their sweeps' (each load marked on the Pareto front, at the goodput knee, at
// saturation), where any summary is a serving cell's.
void print_serving_tables(const std::vector<analysis::BenchmarkSummary>& summaries, const OutputOptions& output) {
    const auto table = report::serving_table(summaries);
    if (table.rows.empty()) return;
    print_table(table, output, false);
    const auto sweeps = report::sweep_views(report::serving_cells(summaries));
    if (sweeps.empty()) return;
    print_table(report::sweep_table(sweeps), output, false);
}

// The pipeline cells' table and their stage breakdown, where any summary is a pipeline cell's.
void print_pipeline_tables(const std::vector<analysis::BenchmarkSummary>& summaries, const OutputOptions& output) {
    const auto table = report::pipeline_table(summaries);
    if (table.rows.empty()) return;
    print_table(table, output, false);
    print_table(report::pipeline_stage_table(summaries), output, false);
}

}  // namespace

void print_summary_tables(const store::ResultsStore& results, const std::vector<analysis::BenchmarkSummary>& summaries,
                          const OutputOptions& output, report::SummaryRows rows) {
    const auto per_iteration = report::per_iteration_summaries(summaries);
    const bool generative = per_iteration.size() < summaries.size();
    if (!per_iteration.empty() || !generative) print_table(report::summary_table(per_iteration, rows), output);
    print_serving_tables(summaries, output);
    print_pipeline_tables(summaries, output);
    if (!generative) return;
    const auto bounds = analysis::generation_bounds(results, summaries, devices::load_catalog());
    print_table(report::generation_table(summaries, bounds), output, per_iteration.empty());
}

void add_summary_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<SummaryArgs>();
    CLI::App* summary = app.add_subcommand("summary", "print the summary of a stored run (default: the latest)");
    add_db_option(*summary, args->db);
    summary->add_option("--run", args->runs,
                        "run id (see --runs), ids (3,5), latest or all (default: the latest run, or every run of a "
                        "store that several hosts wrote: merged shards, a shared store)");
    summary->add_flag("--runs", args->list_runs, "list the stored runs instead");
    summary->add_flag("--each-repeat", args->each_repeat,
                      "a row per repeat of a cell (run setting repeats) instead of one row per cell");
    args->output.add_to(*summary);
    summary->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
