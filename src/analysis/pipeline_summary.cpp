#include "analysis/pipeline_summary.hpp"

#include <algorithm>
#include <cmath>
#include <array>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/plan/pipeline_plan.hpp"
#include "core/spec.hpp"

namespace inferbench::analysis {
namespace {

constexpr std::size_t kStageCount = std::size(kPipelineStages);

std::size_t index_of(PipelineStage stage) { return static_cast<std::size_t>(stage); }

bool is_preprocess(PipelineStage s) {
    return s == PipelineStage::read || s == PipelineStage::decode || s == PipelineStage::resize ||
           s == PipelineStage::normalize;
}
bool is_postprocess(PipelineStage s) { return s == PipelineStage::postprocess || s == PipelineStage::nms; }

// One stage's sums over the batches that passed it.
struct StageSums {
    std::int64_t batches = 0, images = 0;
    double span_ns = 0;
    double cpu_ns = 0;
    std::int64_t cpu_images = 0, cpu_batches = 0;
    StagePlace place = StagePlace::cpu;
    bool mixed_places = false;
};

// One batch's stages: the images out of its last stage, and its spans (for the time between stages).
struct BatchStages {
    PipelineStage last = PipelineStage::read;
    std::int64_t images = -1;  // -1: no stage stored
    std::vector<std::pair<std::int64_t, std::int64_t>> spans;
};

void check_stage(const PipelineStageTime& s, std::size_t iterations) {
    if (s.iteration < 0 || static_cast<std::size_t>(s.iteration) >= iterations)
        throw UserError(fmt::format("pipeline stage {} of iteration {} has no measured iteration ({} stored); the "
                                    "store's pipeline_stages do not belong to its iterations",
                                    to_string(s.stage), s.iteration, iterations));
    if (s.end_ns < s.start_ns)
        throw UserError(fmt::format("pipeline stage {} of iteration {} ends before it starts ({} < {} ns)",
                                    to_string(s.stage), s.iteration, s.end_ns, s.start_ns));
}

void add_to_sums(StageSums& sums, const PipelineStageTime& s) {
    if (sums.batches == 0) sums.place = s.place;
    sums.mixed_places = sums.mixed_places || sums.place != s.place;
    ++sums.batches;
    sums.images += s.images;
    sums.span_ns += static_cast<double>(s.end_ns - s.start_ns);
    if (s.cpu_ns == kStageNotMeasured) return;
    sums.cpu_ns += static_cast<double>(s.cpu_ns);
    sums.cpu_images += s.images;
    ++sums.cpu_batches;
}

void add_to_batch(BatchStages& batch, const PipelineStageTime& s) {
    if (batch.images < 0 || s.stage >= batch.last) {
        batch.last = s.stage;
        batch.images = s.images;
    }
    batch.spans.emplace_back(s.start_ns, s.end_ns);
}

std::pair<std::int64_t, std::int64_t> measured_window(std::span<const IterationRecord> iterations) {
    std::int64_t start = iterations.front().start_ns, end = start;
    for (const auto& it : iterations) {
        start = std::min(start, it.start_ns);
        end = std::max(end, it.start_ns + it.e2e_ns);
    }
    return {start, end};
}

std::vector<std::pair<std::int64_t, std::int64_t>> clipped(std::vector<std::pair<std::int64_t, std::int64_t>> spans,
                                                           std::int64_t from, std::int64_t to) {
    for (auto& [a, b] : spans) {
        a = std::clamp(a, from, to);
        b = std::clamp(b, from, to);
    }
    return spans;
}

// The CPU figures of a stage that has CPU time stored; infer's and a GPU stage's stay unknown (see the header).
void add_cpu_figures(StageFigures& f, const StageSums& sums, const PipelineSummary& summary,
                     std::vector<std::string>& notes) {
    if (f.place == StagePlace::gpu || f.stage == PipelineStage::infer) return;
    const std::string name(to_string(f.stage));
    if (sums.cpu_batches == 0) {
        notes.push_back(fmt::format("{}: CPU time not measured", name));
        return;
    }
    if (sums.cpu_batches < sums.batches)
        notes.push_back(fmt::format("{}: CPU time measured in {} of {} batches; its CPU figures are of those",
                                    name, sums.cpu_batches, sums.batches));
    if (sums.cpu_images > 0) f.cpu_ns_per_image = sums.cpu_ns / static_cast<double>(sums.cpu_images);
    const double measured_share = static_cast<double>(sums.cpu_batches) / static_cast<double>(sums.batches);
    if (summary.window_ns() > 0 && sums.cpu_batches == sums.batches)
        f.cores = sums.cpu_ns / static_cast<double>(summary.window_ns());
    const double span_measured = sums.span_ns * measured_share;
    if (span_measured > 0) f.cores_while_running = sums.cpu_ns / span_measured;
    // A batch's images are shared among the pool's threads: a batch of fewer images than threads keeps only that
    // many busy (batch 1: one thread, however many the pool has). Post-processing and NMS run on one thread.
    if (summary.facts.threads && f.cpu_ns_per_image && *f.cpu_ns_per_image > 0 && sums.batches > 0) {
        const double images_per_batch = std::ceil(static_cast<double>(sums.images) / static_cast<double>(sums.batches));
        const double workers =
            is_postprocess(f.stage) ? 1.0 : std::min(static_cast<double>(*summary.facts.threads), images_per_batch);
        f.workers = static_cast<std::int64_t>(workers);
        f.bound_images_per_s = workers * 1e9 / *f.cpu_ns_per_image;
    }
}

}  // namespace

std::optional<std::size_t> lowest_bound(std::span<const StageFigures> stages) {
    std::optional<std::size_t> lowest;
    for (std::size_t i = 0; i < stages.size(); ++i)
        if (stages[i].bound_images_per_s &&
            (!lowest || *stages[i].bound_images_per_s < *stages[*lowest].bound_images_per_s))
            lowest = i;
    return lowest;
}

namespace {

// Batch figures: images out, e2e summed and the time outside every stage span, over the batches with stages.
struct BatchTotals {
    std::int64_t with_stages = 0, images = 0;
    double e2e_ns = 0, between_ns = 0;
};

BatchTotals batch_totals(std::span<const IterationRecord> iterations, std::vector<BatchStages>& batches) {
    BatchTotals totals;
    for (std::size_t i = 0; i < iterations.size(); ++i) {
        auto& batch = batches[i];
        if (batch.images < 0) continue;
        const auto& it = iterations[i];
        ++totals.with_stages;
        totals.images += batch.images;
        totals.e2e_ns += static_cast<double>(it.e2e_ns);
        const auto inside = union_length_ns(clipped(std::move(batch.spans), it.start_ns, it.start_ns + it.e2e_ns));
        totals.between_ns += static_cast<double>(it.e2e_ns - inside);
    }
    return totals;
}

void add_gpu_idle(PipelineSummary& summary, std::span<const PipelineStageTime> stages) {
    if (!summary.facts.gpu_device) return;
    std::vector<std::pair<std::int64_t, std::int64_t>> infer;
    for (const auto& s : stages)
        if (s.stage == PipelineStage::infer) infer.emplace_back(s.start_ns, s.end_ns);
    if (infer.empty() || summary.window_ns() <= 0) {
        summary.notes.emplace_back("GPU idle time unknown: no infer stage stored");
        return;
    }
    const auto busy = union_length_ns(clipped(std::move(infer), summary.window_start_ns, summary.window_end_ns));
    summary.gpu_idle_pct = 100.0 * (1.0 - static_cast<double>(busy) / static_cast<double>(summary.window_ns()));
}

}  // namespace

PipelineFacts pipeline_facts(const store::BenchmarkRecord& benchmark) {
    PipelineFacts facts;
    const auto device = parse_device(benchmark.device);
    facts.gpu_device = device && device->kind == DeviceKind::cuda;
    const auto json = nlohmann::json::parse(benchmark.settings_json, nullptr, false);
    if (!json.is_object() || !json.contains("pipeline") || !json["pipeline"].is_object()) return facts;
    try {  // the stored spec's keys as their texts, read as the plan reads them (core/plan/pipeline_plan)
        const PipelineSettings settings =
            pipeline_from_texts(json["pipeline"].get<std::map<std::string, std::string>>());
        facts.threads = settings.threads;
        facts.mode = settings.mode;
    } catch (const std::exception&) {
        // not as this inferbench writes it: threads and mode unknown
    }
    return facts;
}

const StageFigures* PipelineSummary::stage(PipelineStage which) const {
    for (const auto& s : stages)
        if (s.stage == which) return &s;
    return nullptr;
}

std::optional<StagePlace> PipelineSummary::preprocess_place() const {
    // read takes a batch's files from host memory wherever the decoding runs: the stages after it say where.
    for (const auto& s : stages)
        if (is_preprocess(s.stage) && s.stage != PipelineStage::read) return s.place;
    return std::nullopt;
}

std::optional<StagePlace> PipelineSummary::postprocess_place() const {
    for (const auto& s : stages)
        if (is_postprocess(s.stage)) return s.place;
    return std::nullopt;
}

std::int64_t union_length_ns(std::vector<std::pair<std::int64_t, std::int64_t>> spans) {
    std::sort(spans.begin(), spans.end());
    std::int64_t total = 0, open_start = 0, open_end = 0;
    bool open = false;
    for (const auto& [start, end] : spans) {
        if (end <= start) continue;
        if (open && start <= open_end) {
            open_end = std::max(open_end, end);
            continue;
        }
        if (open) total += open_end - open_start;
        open = true;
        open_start = start;
        open_end = end;
    }
    if (open) total += open_end - open_start;
    return total;
}

PipelineSummary pipeline_summary(std::span<const IterationRecord> iterations,
                                 std::span<const PipelineStageTime> stages, const PipelineFacts& facts) {
    if (stages.empty()) throw UserError("no pipeline stages stored: the benchmark is not a pipeline cell");
    if (iterations.empty()) throw UserError("pipeline stages stored without measured iterations");
    std::array<StageSums, kStageCount> sums{};
    std::vector<BatchStages> batches(iterations.size());
    for (const auto& s : stages) {
        check_stage(s, iterations.size());
        add_to_sums(sums[index_of(s.stage)], s);
        add_to_batch(batches[static_cast<std::size_t>(s.iteration)], s);
    }
    PipelineSummary summary;
    summary.facts = facts;
    summary.batches = static_cast<std::int64_t>(iterations.size());
    std::tie(summary.window_start_ns, summary.window_end_ns) = measured_window(iterations);
    std::vector<std::int64_t> e2e;
    e2e.reserve(iterations.size());
    for (const auto& it : iterations) e2e.push_back(it.e2e_ns);
    summary.e2e = summarize(e2e);
    const BatchTotals totals = batch_totals(iterations, batches);
    summary.images = totals.images;
    if (summary.window_ns() > 0)
        summary.images_per_s = static_cast<double>(totals.images) * 1e9 / static_cast<double>(summary.window_ns());
    if (totals.with_stages < summary.batches) {
        summary.images_lower_bound = true;
        summary.notes.push_back(fmt::format("{} of {} batches stored no stages: images/s counts the others' images "
                                            "alone, a lower bound",
                                            summary.batches - totals.with_stages, summary.batches));
    }
    if (totals.e2e_ns > 0) summary.between_stages_pct = 100.0 * totals.between_ns / totals.e2e_ns;
    for (const PipelineStage stage : kPipelineStages) {
        const StageSums& s = sums[index_of(stage)];
        if (s.batches == 0) continue;
        StageFigures f;
        f.stage = stage;
        f.place = s.place;
        f.batches = s.batches;
        f.images = s.images;
        f.mean_ns = s.span_ns / static_cast<double>(s.batches);
        if (totals.e2e_ns > 0) f.share_pct = 100.0 * s.span_ns / totals.e2e_ns;
        if (s.mixed_places)
            summary.notes.push_back(fmt::format("{} ran on the CPU in some batches and the GPU in others; its place "
                                                "is the first batch's",
                                                to_string(stage)));
        add_cpu_figures(f, s, summary, summary.notes);
        summary.stages.push_back(f);
    }
    if (!facts.threads) summary.notes.emplace_back("the CPU stages' thread count is not stored: no throughput bound");
    if (const auto* infer = summary.stage(PipelineStage::infer)) summary.network_share_pct = infer->share_pct;
    else summary.notes.emplace_back("no infer stage stored: the network's share is unknown");
    double shares = summary.between_stages_pct;
    for (const auto& f : summary.stages) shares += f.share_pct;
    if (shares > 100.5)
        summary.notes.push_back(fmt::format("stages of one batch overlap (their shares and the time between them "
                                            "add up to {:.0f}% of e2e)",
                                            shares));
    summary.bounding_stage = lowest_bound(summary.stages);
    add_gpu_idle(summary, stages);
    return summary;
}

}  // namespace inferbench::analysis
