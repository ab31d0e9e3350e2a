// How an orchestrator and its worker process talk. The worker is this same executable started as
// `inferbench __worker`, with:
//   fd 0: the request (one JSON document, Request), then EOF
//   fd 1, 2: a pipe the orchestrator keeps the last lines of (failure reasons)
//   fd 3: the iteration trace (memfd, see trace_buffer.hpp)
//   fd 4: events, one JSON object per line, in this order: Loaded, WarmupDone, (Generated, Served or PipelineStages),
//         Measured, then Layers
//         (where the backend's options ask for a per-layer profile); Error instead of whatever did not
//         happen; Skipped alone where the backend cannot run the model it converted for the cell.
// Every message is one struct below; its JSON form is written and read here alone. Both ends are the
// same binary and nothing of the events is stored, so the wire format has no older versions to read.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend.hpp"
#include "core/serving.hpp"
#include "core/spec.hpp"
#include "store/results_store.hpp"

namespace inferbench::runner::worker_protocol {

inline constexpr std::string_view kWorkerCommand = "__worker";
inline constexpr int kRequestFd = 0;
inline constexpr int kTraceFd = 3;
inline constexpr int kEventFd = 4;

// Worker exit codes besides 0.
inline constexpr int kExitBenchmarkError = 3;  // an error event was sent
inline constexpr int kExitProtocolError = 4;   // started wrongly

// What to measure: the cell, and the model file the orchestrator resolved for it (exported zoo model,
// or the user's file; empty for backends that need none).
struct Request {
    BenchmarkSpec spec;
    std::string model_path;
};

// The model is loaded (load_ns timed) and its inputs prepared; warm-up begins.
struct Loaded {
    static constexpr std::string_view kName = "loaded";
    std::int64_t load_ns = 0;
    std::string backend_version;
    std::vector<TensorInfo> inputs;
    // Measured while converting the model (convert_model), and what the worker set up for the cell's
    // measure conditions (runner/worker/cuda_conditions: core/metrics/harness_metrics).
    std::vector<BackendMetric> metrics = {};
};

// The backend cannot run the model it converted for this cell here (ConvertedModel::skip_reason); the
// worker then exits 0 and the cell is recorded as skipped.
struct Skipped {
    static constexpr std::string_view kName = "skipped";
    std::string reason;
};

// Warm-up has ended; the measured loop begins. A backend that runs its own loop sends what it reported
// (OwnLoopReport), -1 where it did not say.
struct WarmupDone {
    static constexpr std::string_view kName = "warmup_done";
    std::int64_t iterations = 0;
    std::int64_t elapsed_ns = 0;
};

// The measured loop has ended; `stopped` where the orchestrator asked it to stop early; whether its
// stopping criterion converged, and what the criterion saw (empty for fixed). A load scenario also says
// what it measured beside its queries (the schedule, the batches, find_peak's steps): stored with the
// benchmark as metrics and series.
struct Measured {
    static constexpr std::string_view kName = "measured";
    std::int64_t iterations = 0;
    std::int64_t wall_ns = 0;
    bool stopped = false;
    Convergence convergence = Convergence::fixed;
    std::string stop_reason = {};
    std::vector<BackendMetric> metrics = {};
    std::vector<store::Series> series = {};
};

// A generative cell's measured generations (runner/worker/generation_loop), sent between generations in batches of
// steps and once the measured loop ends, before Measured: each batch's generations' steps, and in the first batch
// the first generation's tokens (step-major).
struct Generated {
    static constexpr std::string_view kName = "generated";
    std::vector<GenerationRecord> generations;
    std::vector<std::int32_t> first_tokens;
};

// A serving cell's requests (runner/worker/serving_cell), sent in batches as they end and once the measured
// traffic ends, before Measured; the last batch carries what the cell sent them to.
struct Served {
    static constexpr std::string_view kName = "served";
    std::optional<ServingFacts> facts;
    std::vector<ServedRequest> requests;
};

// An image pipeline cell's stage times (runner/worker/pipeline_cell), sent in batches during the measured loop
// and once it ends, before Measured: every stage of every measured batch, numbered by its iteration.
struct PipelineStages {
    static constexpr std::string_view kName = "pipeline_stages";
    std::vector<PipelineStageTime> stages;
};

// After the measured loop: the backend's per-layer times, from a separate profiled run (may be none), and the
// figures it measured besides the iterations (Backend::measured_metrics).
struct Layers {
    static constexpr std::string_view kName = "layers";
    std::vector<LayerTime> layers;
    std::vector<BackendMetric> metrics = {};
};

// The benchmark failed in `phase` ("load", "prepare", "warm-up", "measure", ...); the worker then exits
// with kExitBenchmarkError.
struct Error {
    static constexpr std::string_view kName = "error";
    std::string phase;
    std::string message;
};

using Event = std::variant<Loaded, WarmupDone, Measured, Layers, Error, Skipped, Generated, Served, PipelineStages>;

// The event's name on the wire ("loaded", "warmup_done", ...).
std::string_view event_name(const Event& event);

// Readers throw ProtocolError naming the event and the field at fault.
class ProtocolError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

nlohmann::json to_json(const Request& request);
Request request_from_json(const nlohmann::json& message);

// {"event": <name>, <fields>...}
nlohmann::json to_json(const Event& event);
Event event_from_json(const nlohmann::json& message);

}  // namespace inferbench::runner::worker_protocol
