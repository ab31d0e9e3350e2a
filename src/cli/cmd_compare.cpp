// `inferbench compare --db A [--db B ...]`: the same benchmarks on several devices side by side; or
// `compare --db A --run 1 --run 2`: two runs of one database; or `compare --db all.db --run all`: the runs of
// several hosts in one store (merged shards, a shared store), one side per host's device.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "analysis/default_run.hpp"
#include "analysis/repeats.hpp"
#include "cli/commands.hpp"
#include "cli/filter_args.hpp"
#include "core/error.hpp"
#include "core/plan/settings.hpp"
#include "core/units.hpp"
#include "report/comparison.hpp"
#include "report/html_page.hpp"
#include "report/report_data.hpp"
#include "report/selection.hpp"

namespace inferbench::cli {
namespace {

struct CompareArgs {
    std::vector<std::string> dbs;
    std::vector<std::string> runs;  // one for all databases, or one per --db
    report::ReportFilter filter;    // its runs are set per database
    std::vector<std::string> batches;
    std::string baseline;
    std::string html;
    std::string margin = "2%";
    std::string fail_on_regression;  // empty: never fail
    OutputOptions output;
};

// One side's source: a database and its runs: "latest", a run id, "all" or ids "3,5"; empty where no --run was
// given (the store's default_runs).
struct SourceArg {
    std::string db;
    std::string run;
};

// A run spec compare takes: latest, all, a run id or ids separated by commas.
bool valid_runs(const std::string& runs) {
    if (runs == "latest" || runs == "all") return true;
    const auto items = split_list(runs);
    return !items.empty() &&
           std::all_of(items.begin(), items.end(), [](const auto& item) { return parse_int(item).has_value(); });
}

// The compared (database, run) pairs: every --db with the one --run (latest without it), every --db with
// its own --run, or one --db with each of several --run (two runs of one store).
std::vector<SourceArg> source_args(const CompareArgs& args) {
    const std::size_t runs = args.runs.size();
    if (runs > 1 && runs != args.dbs.size() && args.dbs.size() != 1)
        throw UserError(
            fmt::format("--run: given {} times for {} databases; give it once (for all), once per --db in the same "
                        "order, or several times with one --db to compare runs of that database",
                        runs, args.dbs.size()));
    std::vector<SourceArg> sources;
    for (std::size_t i = 0; i < std::max(runs, args.dbs.size()); ++i) {
        SourceArg source{args.dbs[args.dbs.size() == 1 ? 0 : i], runs == 0 ? "" : args.runs[runs == 1 ? 0 : i]};
        if (!source.run.empty() && !valid_runs(source.run))
            throw UserError(fmt::format("--run {}: give a run id, ids separated by commas (3,5), latest or all",
                                        source.run));
        sources.push_back(std::move(source));
    }
    return sources;
}

template <typename T>
bool admits(const std::vector<T>& wanted, const T& value) {
    return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

bool admits(const report::ReportFilter& f, const store::BenchmarkRecord& b) {
    return admits(f.devices, b.device) && admits(f.models, b.model) && admits(f.backends, b.backend) &&
           admits(f.precisions, b.precision) && admits(f.batch_sizes, b.batch_size);
}

// A filter value no database has is a mistake; one that only some have is what comparing is about.
template <typename T>
void check_values(const std::vector<T>& wanted, const std::vector<std::vector<store::BenchmarkRecord>>& pools,
                  T store::BenchmarkRecord::*field, std::string_view flag) {
    std::set<T> present;
    for (const auto& pool : pools)
        for (const auto& b : pool) present.insert(b.*field);
    for (const auto& value : wanted) {
        if (present.contains(value)) continue;
        std::vector<std::string> have;
        for (const auto& p : present) have.push_back(fmt::format("{}", p));
        throw UserError(
            fmt::format("{} {}: in none of the compared runs; they have: {}", flag, value, join(have, ", ")));
    }
}

double percent_flag(const std::string& flag, const std::string& value) {
    const auto fraction = report::parse_percent_flag(value);
    if (!fraction)
        throw UserError(fmt::format("{} {}: give a percentage with a % sign from 0% to 1000%, e.g. {} 5%", flag, value,
                                    flag));
    return *fraction;
}

// With --fail-on-regression: the pairs slower than allowed on stderr, and exit code kExitRegression.
int regression_exit(const report::Comparison& comparison, const CompareArgs& args) {
    if (args.fail_on_regression.empty()) return kExitOk;
    const double threshold = percent_flag("--fail-on-regression", args.fail_on_regression);
    const auto lines = report::regressions(comparison, threshold);
    for (const auto& line : lines) fmt::print(stderr, "compare: regression: {}\n", line);
    if (lines.empty()) return kExitOk;
    fmt::print(stderr, "compare: {} pair{} slower than the baseline by more than {} (exit code {})\n", lines.size(),
               lines.size() == 1 ? " is" : "s are", args.fail_on_regression, kExitRegression);
    return kExitRegression;
}

// The runs a store shows when no --run names them (analysis::default_runs: every run where several hosts wrote
// it), saying so on stderr where that is every run.
std::string default_runs_of(const store::ResultsStore& results, bool quiet) {
    const auto choice = analysis::default_runs(results);
    if (!choice.note.empty() && !quiet) fmt::print(stderr, "compare: {}\n", choice.note);
    return choice.runs;
}

// The store's runs that the pool's benchmarks come from, oldest first.
std::vector<store::RunRecord> runs_of(const store::ResultsStore& results, const std::vector<store::BenchmarkRecord>& pool) {
    std::set<std::int64_t> ids;
    for (const auto& b : pool) ids.insert(b.run_id);
    std::vector<store::RunRecord> runs;
    for (auto& run : results.runs())
        if (ids.contains(run.run_id)) runs.push_back(std::move(run));
    return runs;
}

// "run 3", "runs 3, 5".
std::string run_words(const std::vector<store::RunRecord>& runs) {
    std::vector<std::string> ids;
    for (const auto& run : runs) ids.push_back(std::to_string(run.run_id));
    return fmt::format("run{} {}", ids.size() == 1 ? "" : "s", join(ids, ", "));
}

int execute(const CompareArgs& args) {
    const auto format = report::parse_format(args.output.resolved());
    const double margin = percent_flag("--margin", args.margin);
    if (!args.fail_on_regression.empty()) percent_flag("--fail-on-regression", args.fail_on_regression);
    const auto filter = cleaned_filter(args.filter, args.batches);
    const auto source_list = source_args(args);
    std::vector<store::ResultsStore> stores;
    std::vector<std::vector<store::BenchmarkRecord>> pools;
    for (const auto& [db, run] : source_list) {
        if (store::store_file_missing(db))
            throw UserError(
                fmt::format("--db {}: no such file; give results databases written by `inferbench run`", db));
        stores.push_back(store::ResultsStore::open(db, store::ResultsStore::Access::read));
        report::ReportFilter runs_only;
        runs_only.runs = run.empty() ? default_runs_of(stores.back(), args.output.quiet) : run;
        pools.push_back(report::select_benchmarks(stores.back(), runs_only));
    }
    check_values(filter.devices, pools, &store::BenchmarkRecord::device, "--device");
    check_values(filter.models, pools, &store::BenchmarkRecord::model, "--model");
    check_values(filter.backends, pools, &store::BenchmarkRecord::backend, "--backend");
    check_values(filter.precisions, pools, &store::BenchmarkRecord::precision, "--precision");
    check_values(filter.batch_sizes, pools, &store::BenchmarkRecord::batch_size, "--batch");

    std::vector<report::ComparisonSource> sources;
    for (std::size_t i = 0; i < source_list.size(); ++i) {
        std::vector<store::BenchmarkRecord> selected;
        for (const auto& b : pools[i])
            if (admits(filter, b)) selected.push_back(b);
        report::ComparisonSource source{.db = source_list[i].db, .runs = runs_of(stores[i], pools[i]), .summaries = {}};
        if (selected.empty())
            fmt::print(stderr, "compare: {} {}: no benchmark matches the filters\n", source.db, run_words(source.runs));
        else
            source.summaries = analysis::combine_cells(report::load_selection(stores[i], selected).summaries());
        sources.push_back(std::move(source));
    }
    auto comparison = report::build_comparison(std::move(sources), args.baseline);
    comparison.margin = margin;
    std::cout << report::render_comparison(comparison, format, render_options(args.output));
    // Text and Markdown carry the warnings; CSV and JSON stay data, so they go to stderr.
    if ((format == report::Format::csv || format == report::Format::json) && !args.output.quiet)
        for (const auto& line : report::comparison_warnings(comparison)) fmt::print(stderr, "compare: warning: {}\n", line);
    if (!args.html.empty()) {
        report::write_text_file(args.html, report::render_comparison_html(comparison));
        fmt::print(stderr, "compare: wrote {}\n", args.html);
    }
    return regression_exit(comparison, args);
}

}  // namespace

void add_compare_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<CompareArgs>();
    CLI::App* cmd = app.add_subcommand(
        "compare",
        "compare the same benchmarks across devices (databases): latency, throughput and energy side by "
        "side, with speed-ups relative to a baseline");
    cmd->add_option("--db", args->dbs,
                    "results database; repeat for each device or machine to compare (or give one, with several --run)")
        ->required();
    cmd->add_option("--run", args->runs,
                    "run id, ids (3,5), latest or all: once for all databases, once per --db in the same order, or "
                    "several times with one --db to compare runs of one database. Several runs of one --db make "
                    "one side per host and device (the latest run's figures where a cell ran in several). Default: "
                    "the latest run, or every run of a store that several hosts wrote (merged shards, a shared store)");
    cmd->add_option("--device", args->filter.devices, "only these devices (cpu, cuda:0, ...), comma-separated")
        ->delimiter(',');
    cmd->add_option("--model", args->filter.models, "only these models")->delimiter(',');
    cmd->add_option("--backend,--frameworks,--framework", args->filter.backends, "only these backends")->delimiter(',');
    cmd->add_option("--precision,--precisions", args->filter.precisions, "only these precisions")->delimiter(',');
    cmd->add_option("--batch,--batches", args->batches, "only these batch sizes, e.g. 1,8")->delimiter(',');
    cmd->add_option(
        "--baseline", args->baseline,
        "what speed-ups are relative to: a database index (1 = the first --db; with one --db, 1 = its first "
        "--run) or a device name, part of its label or of its host's name (default: the first device of the first "
        "database)");
    cmd->add_option("--html", args->html, "also write the comparison as a self-contained HTML page to this file");
    cmd->add_option("--margin", args->margin,
                    "equivalence margin of the verdicts: SAME where the 95% interval of the change in mean latency "
                    "lies within +-this (default 2%)");
    cmd->add_option("--fail-on-regression", args->fail_on_regression,
                    fmt::format("exit with code {} when a pair is SLOWER than the baseline by more than this, e.g. 5%",
                                kExitRegression));
    args->output.add_to(*cmd);
    cmd->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
