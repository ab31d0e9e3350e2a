#include "core/serving_figures.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench {
namespace {

bool has_output(const ServedChunk& chunk) { return chunk.tokens != 0; }

const ServedChunk* first_output(const ServedRequest& request) {
    for (const auto& chunk : request.chunks)
        if (has_output(chunk)) return &chunk;
    return nullptr;
}

}  // namespace

std::string_view to_string(TokenCountSource source) {
    switch (source) {
        case TokenCountSource::usage:
            return "usage";
        case TokenCountSource::chunks:
            return "chunks";
        case TokenCountSource::unknown:
            return "unknown";
    }
    return "unknown";
}

std::int64_t output_token_count(const ServedRequest& request, TokenCountSource* source) {
    TokenCountSource found = TokenCountSource::unknown;
    std::int64_t count = -1;
    if (request.output_tokens >= 0) {
        found = TokenCountSource::usage;
        count = request.output_tokens;
    } else {
        std::int64_t sum = 0;
        bool known = true;
        for (const auto& chunk : request.chunks) {
            if (chunk.tokens < 0) known = false;
            if (chunk.tokens > 0) sum += chunk.tokens;
        }
        if (known) {
            found = TokenCountSource::chunks;
            count = sum;
        }
    }
    if (source) *source = found;
    return count;
}

RequestFigures request_figures(const ServedRequest& request) {
    RequestFigures figures;
    figures.send_delay_ns = request.sent_ns - request.scheduled_ns;
    figures.output_tokens = output_token_count(request, &figures.token_source);
    if (request.outcome != RequestOutcome::ok) return figures;
    figures.e2e_ns = request.end_ns - request.scheduled_ns;
    if (const ServedChunk* first = first_output(request)) figures.ttft_ns = first->arrival_ns - request.scheduled_ns;
    if (figures.ttft_ns && figures.output_tokens >= 2)
        figures.tpot_ns = (*figures.e2e_ns - *figures.ttft_ns) / (figures.output_tokens - 1);
    return figures;
}

std::vector<std::int64_t> chunk_gaps_ns(const ServedRequest& request) {
    std::vector<std::int64_t> gaps;
    const ServedChunk* previous = nullptr;
    for (const auto& chunk : request.chunks) {
        if (!has_output(chunk)) continue;
        if (previous) gaps.push_back(chunk.arrival_ns - previous->arrival_ns);
        previous = &chunk;
    }
    return gaps;
}

std::vector<std::int64_t> per_token_latencies_ns(const ServedRequest& request) {
    std::vector<std::int64_t> latencies;
    // Never more values than the usage's count: a chunk claiming more tokens than the request had gives none.
    const std::int64_t most =
        request.output_tokens >= 0 ? request.output_tokens : std::numeric_limits<std::int64_t>::max();
    const ServedChunk* previous = nullptr;
    for (const auto& chunk : request.chunks) {
        if (!has_output(chunk)) continue;
        if (previous && chunk.tokens > 0 && chunk.tokens <= most - static_cast<std::int64_t>(latencies.size())) {
            const std::int64_t each = (chunk.arrival_ns - previous->arrival_ns) / chunk.tokens;
            latencies.insert(latencies.end(), static_cast<std::size_t>(chunk.tokens), each);
        }
        previous = &chunk;
    }
    return latencies;
}

bool meets_slos(const ServedRequest& request, const ServingSlos& slos) {
    if (request.outcome != RequestOutcome::ok) return false;
    const RequestFigures f = request_figures(request);
    if (slos.ttft_ns > 0 && (!f.ttft_ns || *f.ttft_ns > slos.ttft_ns)) return false;
    if (slos.tpot_ns > 0) {
        if (f.output_tokens < 0) return false;
        if (f.tpot_ns && *f.tpot_ns > slos.tpot_ns) return false;
        if (!f.tpot_ns && f.output_tokens >= 2) return false;  // 2+ tokens and no TTFT: not judged as met
    }
    if (slos.e2e_ns > 0 && (!f.e2e_ns || *f.e2e_ns > slos.e2e_ns)) return false;
    return true;
}

namespace {

// A failed request's figure: above every bound, ranked last.
constexpr std::int64_t kFailed = std::numeric_limits<std::int64_t>::max();

LatencyConstraint judge_constraint(std::string name, std::vector<std::int64_t> values, std::int64_t bound, double p) {
    std::sort(values.begin(), values.end());
    LatencyConstraint c;
    c.name = std::move(name);
    c.bound_ns = bound;
    c.requests = static_cast<std::int64_t>(values.size());
    const SortedValues sorted(values);
    const std::int64_t at_rank = early_stopping::loadgen_percentile(sorted, p);
    c.percentile_failed = !values.empty() && at_rank == kFailed;
    c.percentile_ns = c.percentile_failed ? 0 : at_rank;
    const auto over = std::count_if(values.begin(), values.end(), [&](std::int64_t v) { return v > bound; });
    c.check = early_stopping::server_check(c.requests, static_cast<std::int64_t>(over), p);
    return c;
}

std::string percent_name(double p) { return fmt::format("p{:g}", p * 100); }

void add_reasons(const LatencyConstraint& c, double p, std::vector<std::string>& reasons) {
    if (c.requests == 0) {
        reasons.push_back(fmt::format("no request has a {}", c.name));
        return;
    }
    const std::string bound = format_latency(static_cast<double>(c.bound_ns));
    if (c.percentile_failed)
        reasons.push_back(
            fmt::format("{} {} (LoadGen rank) is a failed request: over the bound {}", percent_name(p), c.name, bound));
    else if (c.percentile_ns > c.bound_ns)
        reasons.push_back(fmt::format("{} {} (LoadGen rank) {} > bound {}", percent_name(p), c.name,
                                      format_latency(static_cast<double>(c.percentile_ns)), bound));
    else if (!c.check.satisfied)
        reasons.push_back(
            fmt::format("early stopping on {}: with {} of {} requests over the bound, {} are needed to "
                        "show {} <= bound at 99% confidence; send more requests",
                        c.name, c.check.overlatency, c.requests, c.check.queries_needed, percent_name(p)));
}

}  // namespace

std::optional<ServingVerdict> judge_llm_server(std::span<const ServedRequest> requests, const ServingSlos& slos,
                                               double percentile) {
    if (slos.ttft_ns <= 0 && slos.tpot_ns <= 0) return std::nullopt;
    ServingVerdict verdict;
    verdict.percentile = percentile;
    std::vector<std::int64_t> ttft, tpot;
    for (const auto& request : requests) {
        if (request.warmup) continue;
        ++verdict.requests;
        if (request.outcome != RequestOutcome::ok) {
            ++verdict.failed;
            ttft.push_back(kFailed);
            tpot.push_back(kFailed);
            continue;
        }
        const RequestFigures f = request_figures(request);
        ttft.push_back(f.ttft_ns.value_or(kFailed));
        if (f.tpot_ns)
            tpot.push_back(*f.tpot_ns);
        else if (f.output_tokens < 0 || f.output_tokens >= 2)
            tpot.push_back(kFailed);  // no figure to judge
    }
    if (slos.ttft_ns > 0) verdict.ttft = judge_constraint("TTFT", std::move(ttft), slos.ttft_ns, percentile);
    if (slos.tpot_ns > 0) verdict.tpot = judge_constraint("TPOT", std::move(tpot), slos.tpot_ns, percentile);
    if (verdict.requests == 0) verdict.reasons.emplace_back("no measured request");
    for (const auto* c : {&verdict.ttft, &verdict.tpot})
        if (*c && verdict.requests > 0) add_reasons(**c, percentile, verdict.reasons);
    verdict.valid = verdict.reasons.empty();
    return verdict;
}

std::string verdict_word(const ServingVerdict& verdict) { return verdict.valid ? "VALID" : "INVALID"; }

}  // namespace inferbench
