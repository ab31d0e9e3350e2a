// Rules on image pipeline cells (analysis/pipeline_summary): a network that is a small part of the end-to-end time
// with the CPU stage that bounds the throughput and the GPU's idle time, post-processing on the CPU that costs more
// than the network, and (across cells) GPU pre-processing measured beyond the CPU's bound.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/time_units.hpp"
#include "core/units.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {
namespace {

const analysis::PipelineSummary* pipeline_of(const BenchmarkEvidence& e) {
    return e.summary.pipeline ? &*e.summary.pipeline : nullptr;
}

const std::vector<std::string> kStageSeries = {"pipeline_stages.start_ns", "pipeline_stages.end_ns",
                                               "pipeline_stages.cpu_ns", "iterations.e2e"};

// A stage as a sentence names it: "decode", "NMS".
std::string stage_name(PipelineStage stage) {
    return stage == PipelineStage::nms ? std::string("NMS") : std::string(to_string(stage));
}

// The threads a stage's bound counts (analysis/pipeline_summary: the pool's, fewer for a small batch, one for
// post-processing and NMS).
std::string threads_text(const analysis::StageFigures& stage) {
    return stage.workers ? fmt::format(" on {} thread{}", *stage.workers, *stage.workers == 1 ? "" : "s")
                         : std::string();
}

// The stage other than infer with the largest share.
const analysis::StageFigures* largest_other_stage(const analysis::PipelineSummary& p) {
    const analysis::StageFigures* largest = nullptr;
    for (const auto& s : p.stages)
        if (s.stage != PipelineStage::infer && (!largest || s.share_pct > largest->share_pct)) largest = &s;
    return largest;
}

// What bounds the throughput, or why that is not known.
std::string bound_text(const analysis::PipelineSummary& p) {
    if (p.bounding_stage) {
        const auto& b = p.stages[*p.bounding_stage];
        return fmt::format("{}{} bounds throughput at {:.0f} images/s ({} of CPU per image; measured {:.0f} "
                           "images/s)",
                           stage_name(b.stage), threads_text(b), *b.bound_images_per_s,
                           format_latency(*b.cpu_ns_per_image), p.images_per_s);
    }
    const auto* largest = largest_other_stage(p);
    const std::string why = p.facts.threads ? "the CPU stages' CPU time is not measured"
                                            : "the CPU stages' thread count is not stored";
    return fmt::format("{} takes the most ({:.0f}%); the CPU stages' bound is unknown: {}",
                       largest ? stage_name(largest->stage) : std::string("nothing"),
                       largest ? largest->share_pct : 0.0, why);
}

std::string cell_label(const store::BenchmarkRecord& b) {
    return fmt::format("#{} {} {} {} {} b{}", b.benchmark_id, b.model, b.backend, b.precision, b.device, b.batch_size);
}

// Same model, backend, device, precision and batch size.
bool same_setup(const store::BenchmarkRecord& a, const store::BenchmarkRecord& b) {
    return a.model == b.model && a.backend == b.backend && a.device == b.device && a.precision == b.precision &&
           a.batch_size == b.batch_size;
}

bool preprocess_stage(PipelineStage s) {
    return s == PipelineStage::read || s == PipelineStage::decode || s == PipelineStage::resize ||
           s == PipelineStage::normalize;
}

}  // namespace

// The share of the measured window some batch was in the network: its spans summed (one backend runs one batch at a
// time). Overlapped, a batch's e2e holds its waits in the queues, so the network's share of e2e is small even where
// the network is busy all the time and bounds the throughput; this share is not.
std::optional<double> network_busy_pct(const analysis::PipelineSummary& p) {
    const auto* infer = p.stage(PipelineStage::infer);
    if (!infer || p.window_ns() <= 0) return std::nullopt;
    return 100.0 * infer->mean_ns * static_cast<double>(infer->batches) / static_cast<double>(p.window_ns());
}

std::vector<Finding> pipeline_network_share(const BenchmarkEvidence& e) {
    const auto* p = pipeline_of(e);
    if (!p || !p->network_share_pct || *p->network_share_pct >= limits::kPipelineNetworkSharePct) return {};
    if (const auto busy = network_busy_pct(*p); busy && *busy >= limits::kPipelineNetworkSharePct) return {};
    std::string statement = fmt::format("the network is {:.0f}% of end-to-end time: {}", *p->network_share_pct,
                                        bound_text(*p));
    if (p->gpu_idle_pct) statement += fmt::format("; the GPU idles {:.0f}% of the run", *p->gpu_idle_pct);
    const std::string try_next =
        p->preprocess_place() == StagePlace::gpu
            ? "overlap the stages (pipeline.mode: overlapped) or give the CPU stages more threads (pipeline.threads)"
            : "more threads for the CPU stages (pipeline.threads), overlapped mode (pipeline.mode: overlapped), or "
              "pre-processing on the GPU (pipeline.preprocess: gpu)";
    return {{"pipeline.network_share", Severity::warning, {e.id()}, std::move(statement),
             {kStageSeries, TimeWindow{0, p->window_ns()}, {}}, try_next}};
}

std::vector<Finding> pipeline_postprocess_cost(const BenchmarkEvidence& e) {
    const auto* p = pipeline_of(e);
    if (!p) return {};
    const auto* infer = p->stage(PipelineStage::infer);
    if (!infer || infer->mean_ns <= 0) return {};
    std::vector<Finding> found;
    for (const PipelineStage which : {PipelineStage::postprocess, PipelineStage::nms}) {
        const auto* s = p->stage(which);
        if (!s || s->place != StagePlace::cpu || s->mean_ns < limits::kPostOverInferRatio * infer->mean_ns) continue;
        const auto& b = e.summary.benchmark;
        found.push_back(
            {fmt::format("pipeline.{}_over_inference", to_string(which)), Severity::warning, {e.id()},
             fmt::format("{} on the CPU costs more than {}'s inference at batch {}: {} against {} per batch ({:.1f}x)",
                         stage_name(which), b.model, b.batch_size, format_latency(s->mean_ns),
                         format_latency(infer->mean_ns), s->mean_ns / infer->mean_ns),
             {kStageSeries, TimeWindow{0, p->window_ns()}, {}},
             "post-processing on the GPU (pipeline.postprocess: gpu), a higher score threshold before NMS (fewer "
             "boxes to compare), or post-processing overlapped with the next batch's inference (pipeline.mode: "
             "overlapped)"});
    }
    return found;
}

std::vector<Finding> pipeline_gpu_preprocess(std::span<const BenchmarkEvidence> all) {
    std::vector<Finding> found;
    for (const auto& cpu : all) {
        const auto* p = pipeline_of(cpu);
        if (!p || p->preprocess_place() != StagePlace::cpu || !p->bounding_stage) continue;
        const auto& bound = p->stages[*p->bounding_stage];
        if (!preprocess_stage(bound.stage)) continue;
        for (const auto& gpu : all) {
            const auto* g = pipeline_of(gpu);
            if (!g || g->preprocess_place() != StagePlace::gpu || !same_setup(cpu.summary.benchmark, gpu.summary.benchmark))
                continue;
            if (g->images_per_s <= *bound.bound_images_per_s) continue;  // the GPU path did not pass the bound
            found.push_back(
                {"pipeline.gpu_preprocess", Severity::info, {cpu.id(), gpu.id()},
                 fmt::format("GPU decode would remove the bound: {} with pre-processing on the GPU ran at {:.0f} "
                             "images/s, above the {:.0f} images/s that {}{} allows on the CPU ({} ran at {:.0f} "
                             "images/s)",
                             cell_label(gpu.summary.benchmark), g->images_per_s, *bound.bound_images_per_s,
                             stage_name(bound.stage), threads_text(bound), cell_label(cpu.summary.benchmark),
                             p->images_per_s),
                 {kStageSeries, std::nullopt, {}},
                 "pre-processing on the GPU (pipeline.preprocess: gpu) for this model and batch size"});
            break;
        }
    }
    return found;
}

}  // namespace inferbench::findings
