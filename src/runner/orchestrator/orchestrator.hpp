// Runs a plan: every cell in its own worker process, each finished benchmark stored in one
// transaction, cells that cannot run recorded as skipped with the reason, failures recorded with
// how the worker ended, and the plan going on after each of them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"
#include "store/recovery_file.hpp"
#include "store/results_store.hpp"

namespace inferbench::runner {

// What a progress display is told, one event at a time (from the lanes' threads under parallel: per_device, never
// two at once). k is 1-based.
struct ProgressEvent {
    enum class Kind { started, tick, finished } kind = Kind::started;
    std::size_t index = 0;
    std::size_t total = 0;
    const BenchmarkSpec* spec = nullptr;
    std::int64_t repeat = 0;                         // of the cell, from 0
    std::int64_t repeats = 1;                        // the plan's
    const store::BenchmarkRecord* record = nullptr;  // on finished
    std::int64_t iterations_so_far = 0;              // on tick
    std::int64_t elapsed_ns = 0;                     // since the plan started
    std::int64_t eta_ns = -1;                        // remaining, estimated; -1 unknown
    // parallel: per_device: the lane's device ("cuda:0"; empty when sequential), and the benchmark's place in it
    // (1-based; `index` then counts the run's benchmarks finished or begun).
    std::string lane = {};
    std::size_t lane_index = 0;
    std::size_t lane_total = 0;
};

struct RunnerOptions {
    std::filesystem::path worker_executable;  // this executable, started as `__worker`
    std::function<void(const ProgressEvent&)> on_progress;
};

// The results store could not take what was measured (disk full, I/O error, a wait given up): the
// plan stopped there, and what the store lacks is kept in memory and in a recovery file.
struct StoreFailure {
    std::string reason;             // "disk full: results database '...': ...", naming the file
    bool run_marked_failed = false;  // the store took the run's status failed; else it says running
    store::RecoveryFile recovery;   // where the unstored benchmarks went (none where `unstored` is empty)
};

struct RunResult {
    std::int64_t run_id = 0;
    std::vector<store::BenchmarkRecord> benchmarks;  // every benchmark that ran, stored or not
    std::vector<store::MeasuredBenchmark> unstored;  // those the store could not take (benchmark_id 0)
    std::optional<StoreFailure> store_failure;
    bool interrupted = false;
    int count(BenchmarkStatus status) const;
};

// Throws UserError naming the first backend option its backend does not know (a backend that cannot
// be created here is left to its cells, skipped with the problem). run_plan checks this first;
// `run --dry-run` calls it alone.
void check_backend_options(const Plan& plan, const BackendRegistry& registry);

// Why each cell will be skipped, as the run decides before starting its worker (cell_problem(): the backend
// cannot be used here, or cannot run the cell's device, precision, batch or scenario), or nothing: `run
// --dry-run` marks those cells. A cell may still be skipped later, by what making or converting its model's
// file finds (ONNX Runtime's fp16 on the CPU, by the converted model's ops).
std::vector<std::optional<std::string>> planned_skips(const std::vector<BenchmarkSpec>& cells,
                                                      const BackendRegistry& registry);

// Throws UserError for bad backend options before anything is run or stored; EnvironmentError where
// the store cannot take the run itself (nothing is measured before that).
RunResult run_plan(const Plan& plan, const BackendRegistry& registry, store::ResultsStore& results,
                   const RunnerOptions& options);

// Going on with an earlier run of `plan` (the one stored with it): only the `pending` repeats of cells
// run, in that order, into run `run_id`, each replacing the run's earlier records of its ordinal and
// repeat. The run is reopened first, which throws if another orchestrator may still be writing it.
struct ResumeTarget {
    std::int64_t run_id = 0;
    std::vector<CellRepeat> pending;
};
RunResult resume_plan(const Plan& plan, const BackendRegistry& registry, store::ResultsStore& results,
                      const RunnerOptions& options, const ResumeTarget& target);

}  // namespace inferbench::runner
