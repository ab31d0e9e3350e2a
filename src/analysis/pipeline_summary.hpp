// What a pipeline cell's stored stages show (core/pipeline: one PipelineStageTime per stage per measured batch, on
// the iterations' clock): where a batch's time goes, how much of it is the network, how long the GPU waits, and
// which CPU stage bounds the throughput. Recomputable at any time, never stored.
//
// Each figure is defined once, here:
//   measured window      the first measured batch's start to the last one's end (its iteration's start + e2e).
//   images/s             the images that left each batch's last stored stage, summed, over the measured window.
//                        DeepStream and DALI call it frames/s or samples/s; Triton's perf_analyzer infer/s
//                        times the batch.
//   e2e per batch        the iterations' e2e: the batch's first stage's start to its last stage's end.
//   stage mean           the mean of the stage's span per batch (first image in to last image out).
//   stage share          the stage's spans summed over the batches that have an iteration / the same batches'
//                        e2e summed, in percent; the network's share is infer's.
//   between stages       e2e not inside any of its batch's stage spans (queues, hand-offs), in percent of e2e.
//   GPU idle             on a GPU cell: 1 - (the union of the infer spans) / the measured window; the time no
//                        batch was in the network, an upper bound on the GPU's idle time (the infer span holds
//                        the copies and the host's part of the call).
//   cores                a CPU stage's CPU time (its threads', CLOCK_THREAD_CPUTIME_ID) summed / the measured
//                        window: the cores it kept busy on average; and / its spans summed: while it ran.
//   bound                a CPU stage's workers x 1e9 / its CPU ns per image, workers the thread count or, where
//                        a batch has fewer images, its images (they are shared among the threads), and one for
//                        post-processing and NMS (one thread runs them): the images/s it could pass were those
//                        threads never idle; the lowest bound is the pipeline's CPU bound. infer's CPU
//                        time is the calling thread's alone (a backend's own threads do its work), so infer
//                        has no CPU figures here.
// A figure that cannot be known (no CPU time stored, no thread count) is nothing, and a note says why.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/pipeline.hpp"
#include "core/spec.hpp"
#include "core/statistics/statistics.hpp"
#include "store/results_store.hpp"

namespace inferbench::analysis {

// One stage's figures over the measured batches that passed it.
struct StageFigures {
    PipelineStage stage = PipelineStage::read;
    StagePlace place = StagePlace::cpu;  // where its batches ran it (the first batch's; a mix is noted)
    std::int64_t batches = 0;            // measured batches that passed it
    std::int64_t images = 0;             // summed over those batches
    double mean_ns = 0;                  // mean span per batch
    double share_pct = 0;                // of e2e (see the header)
    std::optional<double> cpu_ns_per_image;     // nothing: not measured (a GPU stage, infer, no CPU time stored)
    std::optional<double> cores;                // CPU time / measured window
    std::optional<double> cores_while_running;  // CPU time / its spans summed
    std::optional<double> bound_images_per_s;   // a CPU stage's, where its CPU time and the thread count are known
    std::optional<std::int64_t> workers;        // the threads that bound counts
};

// What the caller knows of the cell besides its stages: whether its device is a GPU, and the plan's CPU-stage
// threads and mode where its stored settings hold them.
struct PipelineFacts {
    bool gpu_device = false;
    std::optional<std::int64_t> threads;
    std::optional<PipelineMode> mode;
};

// A stored benchmark's facts: its device, and the threads and mode its stored spec's `pipeline` holds.
PipelineFacts pipeline_facts(const store::BenchmarkRecord& benchmark);

struct PipelineSummary {
    std::int64_t batches = 0;  // measured iterations
    std::int64_t images = 0;   // images out of the batches with stored stages
    std::int64_t window_start_ns = 0, window_end_ns = 0;
    std::int64_t window_ns() const { return window_end_ns - window_start_ns; }
    double images_per_s = 0;
    bool images_lower_bound = false;  // some batches stored no stages: their images are not counted
    TimingSummary e2e;                // per batch, ns
    std::vector<StageFigures> stages;  // the stages stored, in the order a batch passes them
    double between_stages_pct = 0;
    std::optional<double> network_share_pct;  // infer's share; nothing where no infer stage is stored
    std::optional<double> gpu_idle_pct;       // a GPU cell's; nothing on a CPU cell
    std::optional<std::size_t> bounding_stage;  // index into stages: the CPU stage with the lowest bound
    PipelineFacts facts;
    std::vector<std::string> notes;  // what is unknown or not measured, and why

    const StageFigures* stage(PipelineStage which) const;
    // Where pre-processing (decode, resize, normalize; read takes the files from host memory either way) and
    // post-processing (postprocess, nms) ran: the place of the first such stage stored; nothing where none is.
    std::optional<StagePlace> preprocess_place() const;
    std::optional<StagePlace> postprocess_place() const;
};

// The index of the stage with the lowest bound; nothing where no stage has one.
std::optional<std::size_t> lowest_bound(std::span<const StageFigures> stages);

// The length of the union of [start, end) spans, in ns: the time at least one of them was open.
std::int64_t union_length_ns(std::vector<std::pair<std::int64_t, std::int64_t>> spans);

// The summary of a pipeline cell's measured iterations (numbered from 0 in the order given, as stored) and their
// stages. Throws UserError when no stage is stored or a stage names an iteration that is not there.
PipelineSummary pipeline_summary(std::span<const IterationRecord> iterations,
                                 std::span<const PipelineStageTime> stages, const PipelineFacts& facts);

}  // namespace inferbench::analysis
