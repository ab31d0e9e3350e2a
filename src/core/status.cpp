#include "core/status.hpp"

#include <span>

namespace inferbench {
namespace {

template <typename Status>
std::optional<Status> parse_status(std::span<const Status> all, std::string_view text) {
    for (const Status status : all)
        if (to_string(status) == text) return status;
    return std::nullopt;
}

template <typename Status>
std::string join_statuses(std::span<const Status> all) {
    std::string text;
    for (const Status status : all) {
        if (!text.empty()) text += ", ";
        text += to_string(status);
    }
    return text;
}

}  // namespace

std::string_view to_string(BenchmarkStatus status) {
    switch (status) {
        case BenchmarkStatus::ok: return "ok";
        case BenchmarkStatus::failed: return "failed";
        case BenchmarkStatus::skipped: return "skipped";
        case BenchmarkStatus::interrupted: return "interrupted";
    }
    return "?";
}

std::optional<BenchmarkStatus> parse_benchmark_status(std::string_view text) {
    return parse_status<BenchmarkStatus>(kAllBenchmarkStatuses, text);
}

std::string_view to_string(RunStatus status) {
    switch (status) {
        case RunStatus::running: return "running";
        case RunStatus::completed: return "completed";
        case RunStatus::interrupted: return "interrupted";
        case RunStatus::failed: return "failed";
    }
    return "?";
}

std::optional<RunStatus> parse_run_status(std::string_view text) {
    return parse_status<RunStatus>(kAllRunStatuses, text);
}

std::string known_benchmark_statuses() { return join_statuses<BenchmarkStatus>(kAllBenchmarkStatuses); }
std::string known_run_statuses() { return join_statuses<RunStatus>(kAllRunStatuses); }

}  // namespace inferbench
