#include "analysis/serving_metrics.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "analysis/telemetry_summary.hpp"
#include "core/error.hpp"
#include "core/time_units.hpp"

namespace inferbench::analysis {
namespace {

ServingCounts count_requests(std::span<const ServedRequest> requests) {
    ServingCounts counts;
    std::map<RequestOutcome, std::int64_t> by_outcome;
    std::map<std::int64_t, std::int64_t> by_status;
    for (const auto& r : requests) {
        if (r.warmup) {
            ++counts.warmup;
            continue;
        }
        ++counts.sent;
        ++by_outcome[r.outcome];
        if (r.outcome == RequestOutcome::http_status) ++by_status[r.http_status];
    }
    if (const auto ok = by_outcome.find(RequestOutcome::ok); ok != by_outcome.end()) counts.ok = ok->second;
    for (const auto& [outcome, count] : by_outcome)  // in RequestOutcome's order
        if (outcome != RequestOutcome::ok) counts.failures.emplace_back(outcome, count);
    counts.http_statuses.assign(by_status.begin(), by_status.end());
    return counts;
}

// First send to last end of the measured requests, ok or not.
void set_window(std::span<const ServedRequest> requests, ServingSummary& s) {
    std::int64_t start = std::numeric_limits<std::int64_t>::max();
    std::int64_t end = std::numeric_limits<std::int64_t>::min();
    for (const auto& r : requests) {
        if (r.warmup) continue;
        start = std::min(start, r.sent_ns);
        end = std::max(end, r.end_ns);
    }
    if (start > end) return;
    s.window_start_ns = start;
    s.window_end_ns = end;
}

// Every per-request figure of the ok requests, in request order.
struct Collected {
    std::vector<std::int64_t> ttft, tpot, chunk_gap, per_token, e2e;
    std::vector<double> per_user;  // tokens/s
};

Collected collect(std::span<const ServedRequest> requests, ServingSummary& s) {
    Collected c;
    for (const auto& r : requests) {
        if (r.warmup || r.outcome != RequestOutcome::ok) continue;
        const RequestFigures f = request_figures(r);
        switch (f.token_source) {
            case TokenCountSource::usage:
                ++s.token_counting.from_usage;
                break;
            case TokenCountSource::chunks:
                ++s.token_counting.from_chunks;
                break;
            case TokenCountSource::unknown:
                ++s.token_counting.unknown;
                break;
        }
        if (f.output_tokens > 0) s.output_tokens += f.output_tokens;
        if (f.ttft_ns) c.ttft.push_back(*f.ttft_ns);
        if (f.e2e_ns) c.e2e.push_back(*f.e2e_ns);
        if (f.tpot_ns) {
            c.tpot.push_back(*f.tpot_ns);
            if (*f.tpot_ns > 0) c.per_user.push_back(1e9 / static_cast<double>(*f.tpot_ns));
        }
        const auto gaps = chunk_gaps_ns(r);
        c.chunk_gap.insert(c.chunk_gap.end(), gaps.begin(), gaps.end());
        const auto per_token = per_token_latencies_ns(r);
        c.per_token.insert(c.per_token.end(), per_token.begin(), per_token.end());
    }
    return c;
}

std::optional<LatencyDistribution> distribution_of(const std::vector<std::int64_t>& values) {
    if (values.empty()) return std::nullopt;
    return latency_distribution(values);
}

void add_distributions(Collected& c, ServingSummary& s) {
    s.ttft = distribution_of(c.ttft);
    s.tpot = distribution_of(c.tpot);
    s.chunk_gap = distribution_of(c.chunk_gap);
    s.per_token = distribution_of(c.per_token);
    s.e2e = distribution_of(c.e2e);
    if (!c.per_user.empty()) {
        std::sort(c.per_user.begin(), c.per_user.end());
        s.output_tokens_per_s_per_user = summarize_sorted(c.per_user);
    }
    if (s.counts.ok > 0 && !s.ttft) s.notes.emplace_back("TTFT not defined: no ok request had a chunk with output");
    if (s.counts.ok > 0 && !s.tpot)
        s.notes.emplace_back(
            "TPOT and output tokens/s per user not defined: no ok request had 2 or more counted "
            "output tokens");
}

void add_token_notes(const ServingSummary& s, std::vector<std::string>& notes) {
    const TokenCounting& t = s.token_counting;
    if (t.from_chunks > 0)
        notes.push_back(
            fmt::format("{} of {} ok requests' output tokens counted from their chunks (the server "
                        "reported no usage)",
                        t.from_chunks, s.counts.ok));
    if (t.unknown > 0)
        notes.push_back(
            fmt::format("{} of {} ok requests' output tokens not known (no usage, a chunk of unknown "
                        "tokens): in no token figure",
                        t.unknown, s.counts.ok));
}

double per_second(double count, std::int64_t ns) { return count / ns_to_s(static_cast<double>(ns)); }

void add_rates(std::span<const ServedRequest> requests, const ServingSlos& slos, ServingSummary& s) {
    const std::int64_t window = s.window_ns();
    if (window > 0) {
        s.output_tokens_per_s = per_second(static_cast<double>(s.output_tokens), window);
        s.requests_per_s = per_second(static_cast<double>(s.counts.ok), window);
    } else {
        s.notes.emplace_back("throughputs not defined: the measured window is empty");
    }
    if (!slos.any()) return;
    Goodput goodput;
    goodput.slos = slos;
    for (const auto& r : requests)
        if (!r.warmup && meets_slos(r, slos)) ++goodput.good;
    goodput.fraction = s.counts.sent > 0 ? static_cast<double>(goodput.good) / static_cast<double>(s.counts.sent) : 0.0;
    goodput.per_s = window > 0 ? per_second(static_cast<double>(goodput.good), window) : 0.0;
    s.goodput = goodput;
}

// The GPUs' energy where samples of them are given; else the CPU package's (RAPL: the whole package, every
// process on it), the tokens counted for the time its two readings span.
void add_energy(std::span<const GpuSample> gpu, std::span<const CpuSample> cpu, ServingSummary& s) {
    const TelemetrySummary t = summarize_telemetry(gpu, {}, {}, s.output_tokens, s.window_ns());
    if (t.energy_j) {
        s.energy_j = t.energy_j;
        s.energy_source = "GPU " + t.energy_source;
        s.tokens_per_joule = t.inferences_per_joule;
        s.joules_per_token = t.joules_per_inference;
    } else if (const auto package = gpu.empty() ? package_energy(cpu) : std::nullopt) {
        s.energy_j = package->joules;
        s.energy_source = "CPU package (RAPL)";
        double counted = static_cast<double>(s.output_tokens);
        if (package->span_ns > 0 && package->span_ns < s.window_ns())
            counted *= static_cast<double>(package->span_ns) / static_cast<double>(s.window_ns());
        if (counted > 0) {
            s.tokens_per_joule = counted / package->joules;
            s.joules_per_token = package->joules / counted;
        }
    } else {
        s.notes.emplace_back(!gpu.empty() ? "energy not measured: no GPU energy counter or power readings"
                                          : "energy not measured: no GPU samples of the server's device and no "
                                            "RAPL readings of the CPU package");
        return;
    }
    if (!s.tokens_per_joule) s.notes.emplace_back("tokens per joule not defined: no output token counted");
}

}  // namespace

ServingSummary serving_summary(std::span<const ServedRequest> requests, const ServingSlos& slos,
                               std::span<const GpuSample> gpu, std::span<const CpuSample> cpu) {
    ServingSummary s;
    s.counts = count_requests(requests);
    if (s.counts.sent == 0)
        throw UserError(
            fmt::format("a serving cell with no measured request ({} warm-up requests stored): it has no "
                        "figures; run the cell with a request count or duration that sends some",
                        s.counts.warmup));
    set_window(requests, s);
    Collected collected = collect(requests, s);
    add_distributions(collected, s);
    add_token_notes(s, s.notes);
    add_rates(requests, slos, s);
    s.verdict = judge_llm_server(requests, slos);
    add_energy(gpu, cpu, s);
    if (s.counts.ok == 0) s.notes.emplace_back("no request succeeded: no latency or token figure");
    return s;
}

}  // namespace inferbench::analysis
