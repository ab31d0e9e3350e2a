// `inferbench merge A.db B.db ... --into all.db`: the shards of a plan (or any stores) into one store, ids
// remapped, idempotent, in one transaction (store/store_merge). Every source is checked before the target is
// opened, so a refused merge leaves everything as it was.
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "report/table.hpp"
#include "runner/orchestrator/interrupt.hpp"
#include "store/results_store.hpp"
#include "store/store_merge.hpp"

namespace inferbench::cli {
namespace {

struct MergeArgs {
    std::vector<std::string> sources;
    std::string into;
    OutputOptions output;
};

bool is_file_location(const std::string& location) { return location.find("://") == std::string::npos; }

void refuse_target_among_sources(const MergeArgs& args) {
    for (const std::string& source : args.sources) {
        if (!store::same_store(source, args.into)) continue;
        throw UserError(
            fmt::format("merge: '{}' is both a source and the target (--into {}); merge into another "
                        "store, or leave it out of the sources",
                        source, args.into));
    }
}

// Every source checked (opened read-only, then closed again) before anything is written: a refusal names the source
// and changes nothing.
void check_sources(const std::vector<std::string>& sources) {
    for (const std::string& source : sources) {
        std::error_code error;
        if (is_file_location(source) && !std::filesystem::is_regular_file(source, error))
            throw UserError(
                fmt::format("merge: source '{}' is not a file; give the results stores that "
                            "`inferbench run` wrote",
                            source));
        try {
            store::open_merge_source(source);
        } catch (const EnvironmentError& refused) {
            throw EnvironmentError(fmt::format("merge: cannot read source '{}': {}", source, refused.what()));
        }
    }
}

// A target this merge made is removed again where the merge fails or is stopped: it is left as it was, absent.
class CreatedTarget {
public:
    explicit CreatedTarget(const std::string& location) {
        std::error_code error;
        if (is_file_location(location) && !std::filesystem::exists(location, error)) path_ = location;
    }
    CreatedTarget(const CreatedTarget&) = delete;
    CreatedTarget& operator=(const CreatedTarget&) = delete;
    ~CreatedTarget() {
        if (path_.empty()) return;
        std::error_code error;
        for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path_ + suffix, error);
    }
    void keep() { path_.clear(); }

private:
    std::string path_;
};

// One row per source, then the sum over them: what each brought into the target.
report::Table merge_table(const MergeArgs& args, const std::vector<store::MergeCounts>& counts) {
    report::Table table;
    table.name = "merge";
    table.columns = {report::identity_column("store", "store", report::Fit::wrap),
                     {"runs_new", "runs new", 0},
                     {"runs_updated", "updated", 0},
                     {"runs_unchanged", "unchanged", 0},
                     {"benchmarks_added", "benchmarks added", 0},
                     {"benchmarks_replaced", "replaced", 0},
                     {"probes_added", "probes added", 0},
                     {"rows_copied", "rows copied", 0}};
    store::MergeCounts total;
    auto add_row = [&](const std::string& name, const store::MergeCounts& c) {
        table.rows.push_back({name, c.runs_new, c.runs_updated, c.runs_unchanged, c.benchmarks_added,
                              c.benchmarks_replaced, c.probes_added, c.rows_copied});
    };
    for (std::size_t i = 0; i < counts.size(); ++i) {
        const store::MergeCounts& c = counts[i];
        add_row(args.sources[i], c);
        total.runs_new += c.runs_new;
        total.runs_updated += c.runs_updated;
        total.runs_unchanged += c.runs_unchanged;
        total.benchmarks_added += c.benchmarks_added;
        total.benchmarks_replaced += c.benchmarks_replaced;
        total.probes_added += c.probes_added;
        total.rows_copied += c.rows_copied;
    }
    if (counts.size() > 1) add_row("total", total);
    return table;
}

void print_merged(const MergeArgs& args, const std::vector<store::MergeCounts>& counts, double seconds) {
    for (std::size_t i = 0; i < counts.size(); ++i)
        for (const std::string& run : counts[i].running)
            fmt::print(stderr,
                       "inferbench: {}: {} is still running; merged as it is now (merge again once it has "
                       "ended for the rest)\n",
                       args.sources[i], run);
    print_table(merge_table(args, counts), args.output);
    if (args.output.quiet || args.output.resolved() != "table") return;
    print_wrapped(fmt::format("merged {} store{} into {} in {:.1f} s; see `inferbench summary --db {} --runs`",
                              counts.size(), counts.size() == 1 ? "" : "s", args.into, seconds, args.into));
}

int execute(const MergeArgs& args) {
    report::parse_format(args.output.resolved());  // a bad --format fails before any store is opened
    const auto start = std::chrono::steady_clock::now();
    refuse_target_among_sources(args);
    check_sources(args.sources);
    runner::install_interrupt_handler();
    CreatedTarget created(args.into);
    store::ResultsStore target = [&] {
        try {
            return store::ResultsStore::open(args.into);
        } catch (const EnvironmentError& refused) {
            throw EnvironmentError(fmt::format("merge: cannot write target '{}': {}", args.into, refused.what()));
        }
    }();
    target.give_up_waiting_when(runner::interrupt_requested);
    try {
        const auto counts = store::merge_stores(target, args.sources, {.stop = runner::interrupt_requested});
        created.keep();
        print_merged(args, counts, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        return kExitOk;
    } catch (const store::MergeStopped&) {
        fmt::print(stderr, "inferbench: merge stopped by {}; {} is as it was before the merge\n",
                   runner::interrupt_name(), args.into);
        return runner::interrupt_exit_code();
    }
}

}  // namespace

void add_merge_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<MergeArgs>();
    CLI::App* merge = app.add_subcommand(
        "merge",
        "merge results stores (e.g. the shards of a Slurm array) into one: every run, benchmark, iteration "
        "and sample, ids renumbered; merging a store again adds only what is new");
    merge->add_option("sources", args->sources, "the stores to merge, in order")->required();
    merge->add_option("--into", args->into, "the store to merge into (created where missing)")->required();
    args->output.add_to(*merge);
    merge->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
