// Subcommands. Each registers its options and sets the action to run once parsing succeeded.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "analysis/summary.hpp"
#include "backends/registry.hpp"
#include "core/plan/plan.hpp"
#include "report/summary_table.hpp"
#include "report/table.hpp"
#include "store/results_store.hpp"

namespace inferbench::cli {

struct CommandContext {
    std::function<int()> action;
};

void add_run_command(CLI::App& app, CommandContext& context);
void add_summary_command(CLI::App& app, CommandContext& context);
void add_report_command(CLI::App& app, CommandContext& context);
void add_compare_command(CLI::App& app, CommandContext& context);
void add_list_command(CLI::App& app, CommandContext& context);
void add_import_command(CLI::App& app, CommandContext& context);
void add_merge_command(CLI::App& app, CommandContext& context);
void add_models_command(CLI::App& app, CommandContext& context);
void add_models_check(CLI::App& models_cmd, CommandContext& context);
void add_devices_command(CLI::App& app, CommandContext& context);
void add_probe_command(CLI::App& app, CommandContext& context);
void add_roofline_command(CLI::App& app, CommandContext& context);
void add_explain_command(CLI::App& app, CommandContext& context);
void add_completion_command(CLI::App& app, CommandContext& context);
void add_slurm_command(CLI::App& app, CommandContext& context);

// The model and backend names a plan may use: the zoo's, the decoders' and the backends found here.
PlanVocabulary plan_vocabulary(const BackendRegistry& registry);

// The zoo as a table: `list models` and `models list`.
report::Table zoo_models_table();

// --format NAME, --json, --columns KEYS and --quiet, shared by the commands that print tables.
struct OutputOptions {
    std::string format = "table";
    bool json = false;
    std::vector<std::string> columns;  // keys of the main table to show, in order; "all"
    bool quiet = false;                // the table (or files) only: no notes, hints or headlines
    void add_to(CLI::App& command);
    std::string resolved() const { return json ? "json" : format; }
};

// The one way a command prints a table on stdout: hides the columns without a value and, on a
// terminal (text format), fits the terminal's width (report::terminal_width). `main`: --columns
// applies to it (a command's first table); the others show every column.
void print_table(const report::Table& table, const OutputOptions& output, bool main = true);

// The options print_table renders with, for a command that prints a table with its own prose around it.
report::RenderOptions render_options(const OutputOptions& output, bool main = true);

// A line of prose on stdout (a heading, a note), wrapped at spaces to the same width as the tables.
void print_wrapped(const std::string& text);

// A run's summaries as `summary` and `run` print them: the per-iteration table of the benchmarks that are not
// generative, then the generative benchmarks' own table (report/generation_table) with their bounds under the
// roofs of `results`' devices; each only where it has rows.
void print_summary_tables(const store::ResultsStore& results, const std::vector<analysis::BenchmarkSummary>& summaries,
                          const OutputOptions& output, report::SummaryRows rows = report::SummaryRows::cells);

}  // namespace inferbench::cli
