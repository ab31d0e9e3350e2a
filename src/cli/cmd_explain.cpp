// `inferbench explain`: the findings of stored benchmarks (findings/), each with its numbers, its
// evidence and what to try.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/filter_args.hpp"
#include "core/error.hpp"
#include "core/plan/settings.hpp"
#include "findings/findings.hpp"
#include "report/findings_table.hpp"
#include "report/selection.hpp"

namespace inferbench::cli {
namespace {

struct ExplainArgs {
    std::string db;
    report::ReportFilter filter;
    std::vector<std::string> batches;
    OutputOptions output;
};

int execute(const ExplainArgs& args) {
    const auto format = report::parse_format(args.output.resolved());  // a bad --format fails before reading
    const auto filter = cleaned_filter(args.filter, args.batches);
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    if (store::store_file_missing(path))
        throw UserError(
            fmt::format("{}: no results database here; run `inferbench run` first or pass --db PATH", path));
    const auto results = store::ResultsStore::open(path, store::ResultsStore::Access::read);
    const auto benchmarks = report::select_benchmarks(results, filter);
    const auto found = findings::explain(results, benchmarks);
    if (format == report::Format::json) {
        nlohmann::ordered_json doc{{"schema_version", report::kJsonSchemaVersion},
                                   {"benchmarks", benchmarks.size()},
                                   {"findings", nlohmann::ordered_json::array()}};
        for (const auto& f : found) doc["findings"].push_back(findings::to_json(f));
        std::cout << doc.dump(2) << "\n";
        return kExitOk;
    }
    if (!args.output.quiet)
        print_wrapped(fmt::format("{} finding{} for {} benchmark{}{}", found.size(), found.size() == 1 ? "" : "s",
                                  benchmarks.size(), benchmarks.size() == 1 ? "" : "s",
                                  found.empty() ? "" : ", problems first:"));
    if (!found.empty()) print_table(report::findings_table(found), args.output);
    return kExitOk;
}

}  // namespace

void add_explain_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<ExplainArgs>();
    CLI::App* cmd = app.add_subcommand(
        "explain",
        "say what stored results show and why: throttling, launch-, transfer- or host-bound, precision that gains "
        "nothing, memory-bound layers, batch scaling, instability, CPU limits, winners; each finding with its "
        "numbers, evidence and what to try");
    add_db_option(*cmd, args->db);
    add_selection_options(*cmd, args->filter, args->batches);
    args->output.add_to(*cmd);
    cmd->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
