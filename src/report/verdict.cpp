#include "report/verdict.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench::report {
namespace {

std::string signed_percent(double fraction) { return fmt::format("{:+.1f}%", fraction * 100); }

}  // namespace

std::string_view to_string(Verdict verdict) {
    switch (verdict) {
        case Verdict::same: return "SAME";
        case Verdict::faster: return "FASTER";
        case Verdict::slower: return "SLOWER";
        case Verdict::unsure: return "UNSURE";
    }
    return "?";
}

std::string PairVerdict::text() const {
    const std::string interval = change_ci ? fmt::format("{} to {}", signed_percent(change_ci->low),
                                                         signed_percent(change_ci->high))
                                           : "no interval for a side";
    return fmt::format("{} {} ({})", to_string(verdict), signed_percent(change), interval);
}

PairVerdict judge(double side_mean, const std::optional<Interval>& side_ci, double base_mean,
                  const std::optional<Interval>& base_ci, double margin) {
    PairVerdict result;
    result.change = side_mean / base_mean - 1;
    if (!side_ci || !base_ci || side_mean <= 0 || base_mean <= 0) return result;
    // On the log scale, where a ratio's uncertainty is symmetric and its interval stays above 0.
    const double spread = std::hypot(relative_half_width(*side_ci, side_mean), relative_half_width(*base_ci, base_mean));
    const double ratio = side_mean / base_mean;
    result.change_ci = Interval{ratio * std::exp(-spread) - 1, ratio * std::exp(spread) - 1};
    const Interval& ci = *result.change_ci;
    if (ci.low >= -margin && ci.high <= margin) result.verdict = Verdict::same;
    else if (ci.high < 0) result.verdict = Verdict::faster;
    else if (ci.low > 0) result.verdict = Verdict::slower;
    else result.verdict = Verdict::unsure;
    return result;
}

std::optional<PairVerdict> judge(const analysis::BenchmarkSummary& side, const analysis::BenchmarkSummary& baseline,
                                 double margin) {
    if (!analysis::has_latency(side) || !analysis::has_latency(baseline) || side.e2e.mean <= 0 ||
        baseline.e2e.mean <= 0)
        return std::nullopt;
    return judge(side.e2e.mean, side.ci.mean, baseline.e2e.mean, baseline.ci.mean, margin);
}

std::optional<double> parse_percent_flag(std::string_view text) {
    text = trim(text);
    if (!text.ends_with('%')) return std::nullopt;
    const auto value = parse_double(text.substr(0, text.size() - 1));
    if (!value || *value < 0 || *value > 1000) return std::nullopt;
    return *value / 100;
}

}  // namespace inferbench::report
