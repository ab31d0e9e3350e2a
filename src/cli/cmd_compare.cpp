// `inferbench compare --db A [--db B ...]`: the same benchmarks on several devices side by side.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "analysis/repeats.hpp"
#include "cli/commands.hpp"
#include "cli/filter_args.hpp"
#include "core/error.hpp"
#include "core/settings.hpp"
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

// The run of the i-th database: "latest" or one run id.
std::string run_of(const CompareArgs& args, std::size_t i) {
    if (args.runs.empty()) return "latest";
    if (args.runs.size() != 1 && args.runs.size() != args.dbs.size())
        throw UserError(
            fmt::format("--run: given {} times for {} databases; give it once (for all) or once per --db, "
                        "in the same order",
                        args.runs.size(), args.dbs.size()));
    const std::string& run = args.runs[args.runs.size() == 1 ? 0 : i];
    if (run != "latest" && !parse_int(run))
        throw UserError(fmt::format("--run {}: compare takes one run per database: a run id or latest", run));
    return run;
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

int execute(const CompareArgs& args) {
    const auto format = report::parse_format(args.output.resolved());
    const double margin = percent_flag("--margin", args.margin);
    if (!args.fail_on_regression.empty()) percent_flag("--fail-on-regression", args.fail_on_regression);
    const auto filter = cleaned_filter(args.filter, args.batches);
    std::vector<store::ResultsStore> stores;
    std::vector<std::vector<store::BenchmarkRecord>> pools;
    for (std::size_t i = 0; i < args.dbs.size(); ++i) {
        const auto& db = args.dbs[i];
        if (!std::filesystem::exists(db))
            throw UserError(
                fmt::format("--db {}: no such file; give results databases written by `inferbench run`", db));
        stores.push_back(store::ResultsStore::open(db, store::ResultsStore::Access::read));
        report::ReportFilter runs_only;
        runs_only.runs = run_of(args, i);
        pools.push_back(report::select_benchmarks(stores.back(), runs_only));
    }
    check_values(filter.devices, pools, &store::BenchmarkRecord::device, "--device");
    check_values(filter.models, pools, &store::BenchmarkRecord::model, "--model");
    check_values(filter.backends, pools, &store::BenchmarkRecord::backend, "--backend");
    check_values(filter.precisions, pools, &store::BenchmarkRecord::precision, "--precision");
    check_values(filter.batch_sizes, pools, &store::BenchmarkRecord::batch_size, "--batch");

    std::vector<report::ComparisonSource> sources;
    for (std::size_t i = 0; i < args.dbs.size(); ++i) {
        std::vector<store::BenchmarkRecord> selected;
        for (const auto& b : pools[i])
            if (admits(filter, b)) selected.push_back(b);
        report::ComparisonSource source{.db = args.dbs[i], .run = {}, .summaries = {}};
        const auto run_id = pools[i].front().run_id;
        for (const auto& run : stores[i].runs())
            if (run.run_id == run_id) source.run = run;
        if (selected.empty())
            fmt::print(stderr, "compare: {} run {}: no benchmark matches the filters\n", args.dbs[i], run_id);
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
    cmd->add_option("--db", args->dbs, "results database; repeat for each device or machine to compare")->required();
    cmd->add_option("--run", args->runs,
                    "run id or latest (default): once for all databases, or once per --db in the same order");
    cmd->add_option("--device", args->filter.devices, "only these devices (cpu, cuda:0, ...), comma-separated")
        ->delimiter(',');
    cmd->add_option("--model", args->filter.models, "only these models")->delimiter(',');
    cmd->add_option("--backend,--frameworks,--framework", args->filter.backends, "only these backends")->delimiter(',');
    cmd->add_option("--precision,--precisions", args->filter.precisions, "only these precisions")->delimiter(',');
    cmd->add_option("--batch,--batches", args->batches, "only these batch sizes, e.g. 1,8")->delimiter(',');
    cmd->add_option("--baseline", args->baseline,
                    "what speed-ups are relative to: a database index (1 = the first --db) or a device name or part of "
                    "its label (default: the first device of the first database)");
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
