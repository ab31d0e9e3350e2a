// How a benchmark ended and where a run stands: one enum each, with the one mapping to the text the
// results database stores (its schema's CHECK constraints list the same words) and every output shows.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace inferbench {

// One benchmark (a cell of a run), as stored.
enum class BenchmarkStatus {
    ok,           // measured to the end
    failed,       // loading, a run, the worker or the store failed; the reason says which
    skipped,      // cannot run here (backend, device, model format); the reason says why
    interrupted,  // stopped by a signal; the iterations measured so far are kept
};

inline constexpr BenchmarkStatus kAllBenchmarkStatuses[] = {BenchmarkStatus::ok, BenchmarkStatus::failed,
                                                            BenchmarkStatus::skipped, BenchmarkStatus::interrupted};

std::string_view to_string(BenchmarkStatus status);
std::optional<BenchmarkStatus> parse_benchmark_status(std::string_view text);

// One run (an invocation of `inferbench run`, with the resumes that went on with it).
enum class RunStatus {
    running,      // an orchestrator is writing it (or was, and has not been found gone yet)
    completed,    // every cell ended
    interrupted,  // stopped by a signal, or its orchestrator is gone
    failed,       // the store could not take what was measured
};

inline constexpr RunStatus kAllRunStatuses[] = {RunStatus::running, RunStatus::completed, RunStatus::interrupted,
                                                RunStatus::failed};

std::string_view to_string(RunStatus status);
std::optional<RunStatus> parse_run_status(std::string_view text);

// "ok, failed, skipped, interrupted": the words a reader may meet, for error messages.
std::string known_benchmark_statuses();
std::string known_run_statuses();

}  // namespace inferbench
