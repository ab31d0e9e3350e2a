#include "analysis/generation_metrics.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/intervals.hpp"
#include "analysis/telemetry_summary.hpp"
#include "core/error.hpp"
#include "core/metrics/decoder_metrics.hpp"
#include "core/time_units.hpp"

namespace inferbench::analysis {
namespace {

// A generation with every step, and the iteration that timed it.
struct WholeGeneration {
    const IterationRecord* iteration = nullptr;
    const GenerationRecord* generation = nullptr;
};

std::vector<WholeGeneration> whole_generations(std::span<const IterationRecord> iterations,
                                               std::span<const GenerationRecord> generations,
                                               std::int64_t output_tokens) {
    std::vector<WholeGeneration> whole;
    for (const auto& g : generations) {
        if (g.iteration < 0 || g.iteration >= static_cast<std::int64_t>(iterations.size())) continue;
        if (static_cast<std::int64_t>(g.steps.size()) != output_tokens) continue;
        whole.push_back({&iterations[static_cast<std::size_t>(g.iteration)], &g});
    }
    return whole;
}

double per_second(double count, double ns) { return ns > 0 ? count / ns_to_s(ns) : 0.0; }

void add_gpu_telemetry(std::span<const GpuSample> own, std::int64_t tokens, std::int64_t wall_ns,
                       GenerationMetrics& m) {
    // Energy per token is telemetry_summary's energy per inference with a token as the inference.
    const TelemetrySummary t = summarize_telemetry(own, {}, {}, tokens, wall_ns);
    m.peak_gpu_memory_mib = t.peak_fb_used_mib;
    m.peak_process_gpu_memory_mib = t.peak_process_fb_mib;
    m.energy_j = t.energy_j;
    if (t.energy_j) m.energy_source = "GPU " + t.energy_source;
    m.tokens_per_joule = t.inferences_per_joule;
    m.joules_per_token = t.joules_per_inference;
    if (!t.peak_fb_used_mib) m.notes.emplace_back("GPU memory not measured: no GPU sample has it");
    if (!m.tokens_per_joule) m.notes.emplace_back("energy not measured: no GPU energy counter or power readings");
}

void add_cpu_energy(std::span<const CpuSample> cpu, std::int64_t tokens, std::int64_t wall_ns, GenerationMetrics& m) {
    const auto energy = package_energy(cpu);
    if (!energy) {
        m.notes.emplace_back("energy not measured: no RAPL readings of the CPU package (a GPU's NVML energy is "
                             "not the CPU's)");
        return;
    }
    // As telemetry_summary counts inferences: the tokens of the time the two readings span.
    double counted = static_cast<double>(tokens);
    if (wall_ns > 0 && energy->span_ns > 0 && energy->span_ns < wall_ns)
        counted *= static_cast<double>(energy->span_ns) / static_cast<double>(wall_ns);
    m.energy_j = energy->joules;
    m.energy_source = "CPU package (RAPL)";
    m.tokens_per_joule = counted / energy->joules;
    m.joules_per_token = energy->joules / counted;
}

void add_telemetry(const store::BenchmarkRecord& benchmark, std::span<const GenerationRecord> generations,
                   std::span<const IterationRecord> iterations, std::span<const GpuSample> gpu,
                   std::span<const CpuSample> cpu, GenerationMetrics& m) {
    std::int64_t tokens = 0;  // every token generated while measuring, stopped generations' too
    for (const auto& g : generations) tokens += benchmark.batch_size * static_cast<std::int64_t>(g.steps.size());
    std::int64_t wall_ns = benchmark.measured_wall_ns.value_or(0);
    if (wall_ns <= 0 && !iterations.empty())
        wall_ns = iterations.back().start_ns + iterations.back().e2e_ns - iterations.front().start_ns;
    const TelemetrySummary host = summarize_telemetry({}, cpu, {}, 0);
    m.peak_rss_mib = host.peak_rss_mib;
    if (!m.peak_rss_mib) m.notes.emplace_back("resident memory not measured: no process sample has it");
    const auto device = parse_device(benchmark.device);
    if (device && device->kind == DeviceKind::cuda) {
        const auto own = benchmark_gpu_samples(gpu, benchmark.device);
        add_gpu_telemetry(own, tokens, wall_ns, m);
    } else {
        add_cpu_energy(cpu, tokens, wall_ns, m);
    }
}

}  // namespace

LatencyDistribution latency_distribution(std::span<const std::int64_t> in_order) {
    LatencyDistribution d;
    d.ns = summarize(in_order);
    const auto sorted = sorted_values(in_order);
    d.mean_ci = at_least(batch_means_interval(in_order), d.ns.min);
    d.p50_ci = quantile_interval(sorted, 0.50);
    d.p99_ci = quantile_interval(sorted, 0.99);
    return d;
}

std::optional<PackageEnergy> package_energy(std::span<const CpuSample> cpu) {
    const CpuSample* first = nullptr;
    const CpuSample* last = nullptr;
    for (const auto& s : cpu) {
        if (s.phase != SamplePhase::measure || !s.cpu_package_energy_j) continue;
        if (!first) first = &s;
        last = &s;
    }
    if (!first || first == last || *last->cpu_package_energy_j <= *first->cpu_package_energy_j) return std::nullopt;
    return PackageEnergy{*last->cpu_package_energy_j - *first->cpu_package_energy_j, last->t_ns - first->t_ns};
}

double DecoderFacts::weight_bytes_per_step() const {
    return parameters > 0 ? weight_bytes * parameters_read_per_step / parameters : 0.0;
}

std::optional<DecoderFacts> decoder_facts(std::span<const store::Metric> metrics) {
    namespace dm = decoder_metrics;
    const auto get = [&](std::string_view name) { return find_metric(metrics, name); };
    DecoderFacts facts;
    const auto parameters = get(dm::kParameters);
    const auto weight_bytes = get(dm::kWeightBytes);
    const auto read = get(dm::kParametersReadPerStep);
    const auto kv = get(dm::kKvBytesPerToken);
    if (!parameters || !weight_bytes || !read || !kv || *parameters <= 0 || *weight_bytes <= 0 || *read <= 0 || *kv <= 0)
        return std::nullopt;
    facts.parameters = *parameters;
    facts.weight_bytes = *weight_bytes;
    facts.parameters_read_per_step = *read;
    facts.kv_bytes_per_token = *kv;
    const std::string_view dims[] = {dm::kLayers, dm::kHidden, dm::kHeads, dm::kKvHeads, dm::kHeadDim,
                                     dm::kIntermediate, dm::kVocab, dm::kMaxContext};
    std::int64_t values[std::size(dims)] = {};
    for (std::size_t i = 0; i < std::size(dims); ++i) {
        const auto v = get(dims[i]);
        if (!v || *v <= 0) return facts;
        values[i] = static_cast<std::int64_t>(*v);
    }
    DecoderShape shape{.layers = values[0], .hidden = values[1], .heads = values[2], .kv_heads = values[3],
                       .head_dim = values[4], .intermediate = values[5], .vocab = values[6], .max_context = values[7],
                       .tied_embeddings = get(dm::kTiedEmbeddings).value_or(0) != 0};
    if (!shape_problem(shape)) facts.shape = shape;
    return facts;
}

bool is_generative(const store::BenchmarkRecord& benchmark) {
    return benchmark.input_tokens > 0 && benchmark.output_tokens > 0;
}

std::vector<StepTime> step_times(std::span<const IterationRecord> iterations,
                                 std::span<const GenerationRecord> generations, std::int64_t output_tokens) {
    std::vector<StepTime> steps;
    for (const auto& [iteration, generation] : whole_generations(iterations, generations, output_tokens)) {
        std::int64_t previous = iteration->start_ns;
        for (std::size_t s = 0; s < generation->steps.size(); ++s) {
            const GenerationStep& step = generation->steps[s];
            steps.push_back({generation->iteration, static_cast<std::int64_t>(s), step.end_ns, step.end_ns - previous,
                             step.kv_cache_bytes});
            previous = step.end_ns;
        }
    }
    return steps;
}

GenerationMetrics generation_metrics(const store::BenchmarkRecord& benchmark, std::span<const IterationRecord> iterations,
                                     std::span<const GenerationRecord> generations, std::span<const GpuSample> gpu,
                                     std::span<const CpuSample> cpu) {
    if (!is_generative(benchmark))
        throw UserError(fmt::format("benchmark {} is not generative (no input and output tokens): it has no TTFT "
                                    "or TPOT; `inferbench summary` shows its latencies",
                                    benchmark.benchmark_id));
    GenerationMetrics m;
    m.batch_size = benchmark.batch_size;
    m.input_tokens = benchmark.input_tokens;
    m.output_tokens = benchmark.output_tokens;
    const auto whole = whole_generations(iterations, generations, benchmark.output_tokens);
    m.generations = static_cast<std::int64_t>(whole.size());
    m.incomplete = static_cast<std::int64_t>(generations.size()) - m.generations;
    if (whole.empty())
        throw UserError(fmt::format("benchmark {}: none of its {} stored generations has all {} steps; run the cell "
                                    "again (a generation stopped early is not timed whole)",
                                    benchmark.benchmark_id, generations.size(), benchmark.output_tokens));
    if (m.incomplete > 0)
        m.notes.push_back(fmt::format("{} of {} generations stopped before {} tokens: left out", m.incomplete,
                                      generations.size(), benchmark.output_tokens));

    std::vector<std::int64_t> ttft, decode, e2e;
    for (const auto& [iteration, generation] : whole) {
        ttft.push_back(generation->steps.front().end_ns - iteration->start_ns);
        e2e.push_back(iteration->e2e_ns);
        decode.push_back(iteration->e2e_ns - ttft.back());
    }
    for (const auto& step : whole.front().generation->steps) m.kv_cache_bytes.push_back(step.kv_cache_bytes);
    m.ttft = latency_distribution(ttft);
    m.e2e = latency_distribution(e2e);
    const double batch = static_cast<double>(benchmark.batch_size);
    m.prefill_tokens_per_s = per_second(batch * static_cast<double>(benchmark.input_tokens), m.ttft.ns.mean);
    m.output_tokens_per_s = per_second(batch * static_cast<double>(benchmark.output_tokens), m.e2e.ns.mean);
    if (benchmark.output_tokens > 1) {
        const std::int64_t decode_steps = benchmark.output_tokens - 1;
        std::vector<std::int64_t> tpot;
        for (const auto d : decode) tpot.push_back(d / decode_steps);
        m.tpot = latency_distribution(tpot);
        std::vector<std::int64_t> per_token;
        for (const auto& step : step_times(iterations, generations, benchmark.output_tokens))
            if (step.step > 0) per_token.push_back(step.duration_ns);
        m.per_token = latency_distribution(per_token);
        const TimingSummary decode_time = summarize(decode);
        m.decode_steps_per_s = per_second(static_cast<double>(decode_steps), decode_time.mean);
        m.decode_tokens_per_s = *m.decode_steps_per_s * batch;
    } else {
        m.notes.emplace_back("TPOT, per-token latency and decode tokens/s not defined: 1 output token (no decode step)");
    }
    add_telemetry(benchmark, generations, iterations, gpu, cpu, m);
    return m;
}

GenerationMetrics generation_metrics(const store::MeasuredBenchmark& measured,
                                     std::span<const IterationRecord> iterations) {
    GenerationMetrics m = generation_metrics(measured.record, iterations.empty() ? std::span(measured.iterations) : iterations,
                                             measured.generations, measured.gpu_samples, measured.cpu_samples);
    m.decoder = decoder_facts(measured.metrics);
    return m;
}

}  // namespace inferbench::analysis
