// The host side of a benchmark: the worker's cores and its memory over the measured phase.
#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/units.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {

namespace {

std::vector<const CpuSample*> measure_samples(std::span<const CpuSample> cpu) {
    std::vector<const CpuSample*> out;
    for (const auto& s : cpu)
        if (s.phase == SamplePhase::measure) out.push_back(&s);
    std::stable_sort(out.begin(), out.end(), [](auto a, auto b) { return a->t_ns < b->t_ns; });
    return out;
}

// The busiest core's mean share over the samples, and its index; nothing without per-core shares.
std::optional<std::pair<std::size_t, double>> busiest_core(std::span<const CpuSample* const> samples) {
    std::vector<double> sum;
    std::size_t counted = 0;
    for (const auto* s : samples) {
        if (s->process_cpu_pct_per_core.empty()) continue;
        if (sum.size() < s->process_cpu_pct_per_core.size()) sum.resize(s->process_cpu_pct_per_core.size());
        for (std::size_t c = 0; c < s->process_cpu_pct_per_core.size(); ++c) sum[c] += s->process_cpu_pct_per_core[c];
        ++counted;
    }
    if (counted == 0) return std::nullopt;
    const auto it = std::max_element(sum.begin(), sum.end());
    return std::pair{static_cast<std::size_t>(it - sum.begin()), *it / static_cast<double>(counted)};
}

std::size_t core_count(std::span<const CpuSample* const> samples) {
    std::size_t n = 0;
    for (const auto* s : samples) n = std::max(n, s->process_cpu_pct_per_core.size());
    return n;
}

// The GPU's share of an iteration (copies and compute over end to end), where both were measured.
std::optional<double> gpu_busy_share(const BenchmarkEvidence& e) {
    const auto& t = e.stages;
    if (!t.compute_ns || e.summary.e2e.mean <= 0) return std::nullopt;
    return (*t.compute_ns + t.h2d_ns.value_or(0) + t.d2h_ns.value_or(0)) / e.summary.e2e.mean;
}

std::optional<Finding> saturated_core(const BenchmarkEvidence& e, std::span<const CpuSample* const> samples) {
    if (!e.on_gpu()) return std::nullopt;  // on a CPU device busy cores are the work itself
    const auto core = busiest_core(samples);
    if (!core || core->second < limits::kFullCorePct) return std::nullopt;
    const auto busy = gpu_busy_share(e);
    if (busy && *busy >= limits::kGpuBusyShare) return std::nullopt;  // it waits, spinning, on a busy GPU
    const std::string why =
        busy ? fmt::format(
                   "one host thread feeds the GPU and is at its limit: the GPU copies and computes for only "
                   "{:.0f}% of each iteration",
                   *busy * 100)
             : std::string(
                   "without GPU times it cannot be told whether the thread feeds the GPU at its limit or "
                   "spins waiting for it");
    return Finding{"cpu.core_saturated",
                   Severity::warning,
                   {e.id()},
                   fmt::format("the worker kept core {} {:.0f}% busy through the measured phase of a GPU benchmark: {}",
                               core->first, core->second, why),
                   {{"cpu_samples.process_cpu_pct_per_core"}, std::nullopt, {}},
                   "capture a CUDA graph, batch more per launch, move pre/post-processing off the feeding thread; a "
                   "spinning synchronisation also reads as busy (blocking sync frees the core)"};
}

// The cell's intra-op thread setting as stored with it: the option's name and value, where the backend
// has one ("intra_op_threads": ONNX Runtime, TensorFlow; "threads": torch, AOTInductor, external runners).
struct ThreadSetting {
    std::string option;
    std::optional<std::int64_t> threads;  // none or 0: the framework's default (every core, or its own)
};
std::optional<ThreadSetting> thread_setting(const BenchmarkEvidence& e) {
    const auto& values = e.summary.settings.backend_option_values;
    for (const std::string_view option : {"intra_op_threads", "threads"}) {
        const auto it = values.find(option);
        if (it == values.end()) continue;
        const auto n = parse_int(it->second);
        return ThreadSetting{std::string(option), n && *n > 0 ? n : std::nullopt};
    }
    return std::nullopt;
}

// What one core busy says, given the cell's own thread setting: one thread configured is the setting at
// work; more (or the default) configured is a model that gives its threads little parallel work.
std::pair<std::string, std::string> single_core_reading(const BenchmarkEvidence& e) {
    const auto setting = thread_setting(e);
    if (setting && setting->threads == 1)
        return {fmt::format("it was set to one thread ({}=1)", setting->option),
                fmt::format("raise {} toward the host's core count, or run several streams", setting->option)};
    if (setting && setting->threads)
        return {fmt::format("with {}={}, its threads found little parallel work (operators too small to split)",
                            setting->option, *setting->threads),
                "raise the batch size (more work per operator), or run several streams of one thread each"};
    if (setting)
        return {fmt::format("with {} at the framework's default, its threads found little parallel work",
                            setting->option),
                "raise the batch size (more work per operator), or run several streams"};
    return {"inference ran mostly on one thread (the backend stores no thread setting)",
            "raise the backend's intra-op thread count where it has one, or run several streams"};
}

// Not on a busy host (host.busy): there one core's worth is what the others left the worker.
std::optional<Finding> single_core(const BenchmarkEvidence& e, std::span<const CpuSample* const> samples) {
    if (e.on_gpu() || host_was_busy(e)) return std::nullopt;
    const auto cores = core_count(samples);
    const auto mean = e.summary.telemetry.mean_process_cpu_pct;
    // One core's worth, give or take the sampling: under 1.2 cores busy on a host of two or more.
    constexpr double kOneCorePct = 120.0;
    if (cores < 2 || !mean || *mean > kOneCorePct || *mean < limits::kFullCorePct) return std::nullopt;
    auto [why, advice] = single_core_reading(e);
    return Finding{"cpu.single_core", Severity::info, {e.id()},
                   fmt::format("the CPU benchmark kept about one core busy (mean {:.0f}% of a core) on a host of {} "
                               "cores: {}",
                               *mean, cores, why),
                   {{"cpu_samples.process_cpu_pct", "cpu_samples.process_cpu_pct_per_core"}, std::nullopt, {}},
                   std::move(advice)};
}

std::optional<Finding> rss_growth(const BenchmarkEvidence& e, std::span<const CpuSample* const> samples) {
    const CpuSample *first = nullptr, *last = nullptr;
    for (const auto* s : samples) {
        if (!s->process_rss_mib) continue;
        if (!first) first = s;
        last = s;
    }
    if (!first || first == last) return std::nullopt;
    const double growth = *last->process_rss_mib - *first->process_rss_mib;
    if (growth <= limits::kRssGrowthMib || growth <= limits::kRssGrowthFraction * *first->process_rss_mib)
        return std::nullopt;
    // A serving cell's worker tree holds the server it started, whose KV cache and buffers fill as it serves.
    if (e.serving())
        return Finding{"cpu.rss_growth", Severity::info, {e.id()},
                       fmt::format("the resident memory of the client and of the server it started (if any) grew from "
                                   "{:.0f} MiB to {:.0f} MiB (+{:.0f} MiB, {:+.0f}%) during the measured phase",
                                   *first->process_rss_mib, *last->process_rss_mib, growth,
                                   growth / *first->process_rss_mib * 100),
                       {{"cpu_samples.process_rss_mib"}, TimeWindow{0, last->t_ns - first->t_ns}, {}},
                       "a server's KV cache and buffers fill as its slots take longer contexts; a longer run shows "
                       "whether it levels off"};
    return Finding{"cpu.rss_growth", Severity::warning, {e.id()},
                   fmt::format("the worker's resident memory grew from {:.0f} MiB to {:.0f} MiB (+{:.0f} MiB, "
                               "{:+.0f}%) during the measured phase",
                               *first->process_rss_mib, *last->process_rss_mib, growth,
                               growth / *first->process_rss_mib * 100),
                   {{"cpu_samples.process_rss_mib"}, TimeWindow{0, last->t_ns - first->t_ns}, {}},
                   "look for a leak or an unbounded cache (per-shape plans, profiler buffers); a longer run shows "
                   "whether it levels off"};
}

}  // namespace

std::vector<Finding> cpu_limits(const BenchmarkEvidence& e) {
    const auto samples = measure_samples(e.cpu);
    if (samples.empty()) return {};
    std::vector<Finding> out;
    for (auto f : {saturated_core(e, samples), single_core(e, samples), rss_growth(e, samples)})
        if (f) out.push_back(std::move(*f));
    return out;
}

bool host_was_busy(const BenchmarkEvidence& e) { return e.host && e.host->others_pct >= limits::kHostBusyOthersPct; }

std::vector<Finding> host_busy(const BenchmarkEvidence& e) {
    if (!host_was_busy(e)) return {};
    const HostLoad& h = *e.host;
    const auto setting = thread_setting(e);
    const std::string threads = setting && setting->threads ? fmt::format(", set to {} threads", *setting->threads) : "";
    // A serving cell's server is one of the other processes where it runs on this host: what matters then is
    // whether the client (the worker) had the CPU it needed.
    if (e.serving())
        return {Finding{
            "host.busy", Severity::info, {e.id()},
            fmt::format("other processes (a server on this host that the cell did not start among them) kept "
                        "{:.0f}% of the host's {} cores busy during the measured phase (the host {:.0f}% busy in all, "
                        "the client and the server it started, if any, {:.0f}% of a core): they shared the CPUs",
                        h.others_pct, h.cores, h.host_pct, h.worker_core_pct),
            {{"cpu_samples.host_cpu_pct", "cpu_samples.process_cpu_pct"}, std::nullopt, {}},
            "run the client on another host than a CPU server, or keep other jobs off the host"}};
    // parallel: per_device: the other devices' workers of the run are among the other processes.
    const std::size_t beside = e.summary.benchmark.concurrent.size();
    const std::string lanes =
        beside == 0 ? "" : fmt::format(", this run's workers on other devices among them ({} benchmark{} at the same time)",
                                       beside, beside == 1 ? "" : "s");
    return {Finding{
        "host.busy", Severity::warning, {e.id()},
        fmt::format("other processes kept {:.0f}% of the host's {} cores busy during the measured phase (the host "
                    "{:.0f}% busy in all, the worker {:.0f}% of a core{}{}): the benchmark shared the CPUs, so its "
                    "latency, its spread and its threads' use of the cores are partly the other load's",
                    h.others_pct, h.cores, h.host_pct, h.worker_core_pct, threads, lanes),
        {{"cpu_samples.host_cpu_pct", "cpu_samples.process_cpu_pct"}, std::nullopt, {}},
        "measure on an idle host (stop other jobs), or pin the worker to cores the others do not use"}};
}

// Only where the backend reported the stages (a runner's pre_ns / post_ns): nothing is said of the others.
std::vector<Finding> pre_post_processing(const BenchmarkEvidence& e) {
    const auto& st = e.summary.host_stages;
    const auto share = st.share_pct();
    if (!share || *share < limits::kPrePostSharePct) return {};
    std::vector<std::string> parts;
    if (st.pre_mean_ns) parts.push_back(fmt::format("pre-processing {}", format_latency(*st.pre_mean_ns)));
    if (st.post_mean_ns) parts.push_back(fmt::format("post-processing {}", format_latency(*st.post_mean_ns)));
    return {Finding{
        "host.pre_post_processing",
        Severity::warning,
        {e.id()},
        fmt::format("{:.0f}% of the end-to-end time is spent outside the model ({} of {} per iteration, "
                    "as the runner reported over {:.0f} iterations): a faster model gains at most {:.2f}x "
                    "end to end",
                    *share, fmt::join(parts, " and "), format_latency(*st.e2e_mean_ns), st.iterations.value_or(0),
                    100 / *share),
        {{"benchmark_metrics.host_stage_pre_mean_ns", "benchmark_metrics.host_stage_post_mean_ns"}, std::nullopt, {}},
        "move the pre-processing to the GPU or to other threads (a pipeline that overlaps it with "
        "inference), batch it, or cache what does not change per request"}};
}

}  // namespace inferbench::findings
