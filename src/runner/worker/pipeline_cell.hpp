// An image pipeline cell in the worker (core/pipeline): its images read (and each decoded once) before anything is
// timed, the model prepared with a first batch, then batches through read -> decode -> resize -> normalise ->
// stage_inputs + infer -> post-processing -> NMS under the cell's LoopSettings (warm-up, duration, min/max
// iterations, stopping criterion):
//  * sequential: one batch through every stage at a time, on the worker's thread (the pool's threads for decode,
//    resize and normalise);
//  * overlapped: pre-processing, inference and post-processing each on a thread of its own, with queues of at
//    most queue_depth batches between them: batch n+1 is pre-processed while batch n infers.
// Each measured batch is one iteration record (start: its read's start; e2e: to its last stage's end; the backend's
// device times; overlapped, queue_ns: its waits in the queues) and its stages go to the orchestrator in
// PipelineStages events, sent every kStagesPerEvent stages so that the worker's memory stays bounded.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/spec.hpp"
#include "runner/worker/measure_loop.hpp"
#include "runner/worker/pipeline_batches.hpp"
#include "runner/worker/serving_cell.hpp"

namespace inferbench::runner {

// Why a pipeline cell's model has no pipeline here (a model without images, a user's model without steps), or
// nothing; the backend's and the device's part is backends/registry's cell_problem.
std::optional<std::string> pipeline_model_problem(const BenchmarkSpec& spec);

class BatchSource;

class PipelineCell {
public:
    static constexpr std::size_t kStagesPerEvent = 16384;

    // Resolves the pipeline, reads the images and prepares the backend with a first batch, untimed; `gpu`: the
    // opened GPU stages of a preprocess: gpu cell. Throws UserError (no pipeline, no image left, an input the steps
    // do not fill).
    PipelineCell(Backend& backend, const BenchmarkSpec& spec, const std::string& model_path,
                 std::unique_ptr<pipeline::GpuStages> gpu = nullptr);
    ~PipelineCell();

    // The figures stored with the benchmark (core/metrics/pipeline_metrics).
    std::vector<BackendMetric> metrics() const;

    // Whole batches until both the warm-up time and count are reached, or a stop; overlapped, the stage threads
    // start here and run on into the measured loop.
    WarmupResult warm_up(const LoopSettings& loop, const std::atomic<std::int32_t>& stop);
    // The measured batches until the loop's stopping rule says so, or a stop.
    MeasureResult measure(const LoopSettings& loop, TraceSink sink, const std::atomic<std::int32_t>& stop,
                          const EventSender& send);

private:
    PipelineBatches batches_;
    std::int64_t skipped_ = 0;
    std::int64_t threads_ = 1;
    std::int64_t queue_depth_ = 0;
    bool overlapped_ = false;
    std::unique_ptr<BatchSource> source_;
};

}  // namespace inferbench::runner
