// `inferbench compare`'s verdict on a pair of benchmarks (one side against the baseline), from the 95%
// confidence intervals of their mean latencies (analysis/intervals.hpp: batch means of one run's
// iterations, or Student t over a cell's repeats).
//
// change = r - 1 with r = side's mean / baseline's mean (+0.05: the side is 5% slower). Its interval:
// [r exp(-h) - 1, r exp(h) - 1] with h = sqrt(a^2 + b^2), a and b the relative half-widths of the two
// means' intervals: the half-width of ln r to first order, the sides independent (on the log scale a
// ratio's interval is symmetric and stays above 0). With the equivalence margin m (default 2%):
//   SAME    the whole interval lies within +-m: any difference is smaller than the margin;
//   FASTER  the whole interval lies below 0 (and reaches beyond -m);
//   SLOWER  the whole interval lies above 0 (and reaches beyond +m);
//   UNSURE  the interval holds 0 and reaches beyond the margin, or a side has no interval.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analysis/summary.hpp"
#include "core/statistics/confidence.hpp"

namespace inferbench::report {

inline constexpr double kDefaultMargin = 0.02;

enum class Verdict { same, faster, slower, unsure };

std::string_view to_string(Verdict verdict);  // "SAME", "FASTER", "SLOWER", "UNSURE"

struct PairVerdict {
    Verdict verdict = Verdict::unsure;
    double change = 0;                     // of the mean latency, a fraction
    std::optional<Interval> change_ci;     // nothing where a side has no interval
    // "SLOWER +7.2% (+5.1% to +9.3%)", "UNSURE +0.4% (no interval for a side)"
    std::string text() const;
};

// Nothing where a side has no mean latency.
std::optional<PairVerdict> judge(const analysis::BenchmarkSummary& side, const analysis::BenchmarkSummary& baseline,
                                 double margin = kDefaultMargin);
PairVerdict judge(double side_mean, const std::optional<Interval>& side_ci, double base_mean,
                  const std::optional<Interval>& base_ci, double margin = kDefaultMargin);

// A percentage as compare's flags take it: "5%" -> 0.05; nothing where it is not a number with a % sign
// from 0% to 1000%.
std::optional<double> parse_percent_flag(std::string_view text);

}  // namespace inferbench::report
