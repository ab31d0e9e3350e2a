// Exact order statistics of integer values (nanosecond timings) read several times over, in memory that does
// not grow with their count: a stored benchmark of 50 million iterations is summarized without holding them.
//
// SortedValues is what every percentile, order-statistics interval and early-stopping estimate reads: the
// values in ascending order, either all held (a sorted span) or known at the ranks asked for only.
// RankSelector finds those ranks exactly:
//   pass 1 (count)   counts the values into buckets keyed by binary exponent and the top 12 bits (values
//                    below 4096 ns have a bucket each), with count, min, max, an exact integer sum and
//                    Welford's mean and squares;
//   the ranks        the caller's own code asks them of a recorder (SortedValues::recorder) sized to the
//                    count, so the ranks selected are the ranks read: no second copy of any rank rule;
//   pass 2.. (take)  a bucket holding an asked rank is resolved at once where it holds one value; its values
//                    are collected and sorted where they are few (kCollectLimit); else it is split into 4096
//                    narrower buckets for one more pass (at most 5 such passes for any int64 range).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <vector>

namespace inferbench {

class SortedValues {
public:
    SortedValues() = default;
    // All the values, ascending (implicit: code that holds them all passes its sorted span).
    SortedValues(std::span<const std::int64_t> sorted);  // NOLINT(google-explicit-constructor)
    SortedValues(const std::vector<std::int64_t>& sorted)  // NOLINT(google-explicit-constructor)
        : SortedValues(std::span<const std::int64_t>(sorted)) {}

    // A stand-in of `count` values that remembers which ranks and bounds were asked of it; it answers 0.
    static SortedValues recorder(std::int64_t count);

    std::int64_t size() const { return count_; }
    bool empty() const { return count_ == 0; }
    // The value of rank `rank` (0: the least). Throws std::logic_error for a rank not selected.
    std::int64_t operator[](std::int64_t rank) const;
    std::int64_t front() const { return (*this)[0]; }
    // How many values are greater than `bound`. Throws std::logic_error for a bound not counted.
    std::int64_t count_above(std::int64_t bound) const;

    // What a recorder was asked.
    std::set<std::int64_t> asked_ranks() const;
    std::set<std::int64_t> asked_bounds() const;

private:
    friend class RankSelector;
    struct Asked {
        std::set<std::int64_t> ranks, bounds;
    };
    std::span<const std::int64_t> all_;
    bool holds_all_ = false;
    std::int64_t count_ = 0;
    std::map<std::int64_t, std::int64_t> at_rank_;
    std::map<std::int64_t, std::int64_t> above_;
    std::shared_ptr<Asked> asked_;
};

// Count, extremes and moments of values in one pass. The sum is exact (128-bit), so the mean equals that of
// any order of summing wherever the partial sums stay below 2^53 (104 days of nanoseconds); the squares
// about the mean are Welford's in long double (their order differs from a sorted pass's in the last bits).
struct Moments {
    std::int64_t count = 0;
    std::int64_t min = 0, max = 0;
    __extension__ __int128 sum = 0;
    long double welford_mean = 0, squares = 0;

    void add(std::int64_t value);
    double mean() const;
    double sample_stdev() const;  // 0 for fewer than 2 values
};

class RankSelector {
public:
    // Values collected at once at most, per bucket holding an asked rank (8 bytes each).
    static constexpr std::int64_t kCollectLimit = std::int64_t{1} << 16;

    // Pass 1: every value once.
    void count(std::int64_t value);
    const Moments& moments() const { return moments_; }

    // After pass 1: select these ranks (each in [0, count)) and count the values above these bounds.
    void ask(const SortedValues& recorded);
    // Whether another pass of take() is needed; each pass gives every value to take() then calls end_pass().
    bool needs_pass() const { return !pending_.empty() || !bounds_.empty(); }
    void take(std::int64_t value);
    void end_pass();

    // Once needs_pass() is false: the values at the asked ranks.
    SortedValues sorted() const;

private:
    // Values in [low, high] with `below` values under low, holding the ranks `ranks`.
    struct Range {
        std::int64_t low = 0, high = 0, below = 0, count = 0;
        std::vector<std::int64_t> ranks;
        unsigned shift = 0;                  // split: bucket = (value - low) >> shift
        std::vector<std::int64_t> counts;    // split buckets' counts
        std::vector<std::int64_t> values;    // collected
        bool collecting() const { return counts.empty(); }
    };
    void plan(std::vector<Range> ranges);
    Range* range_of(std::int64_t value);
    void resolve(Range& range, std::vector<Range>& next);

    Moments moments_;
    std::int64_t negatives_ = 0;                        // one bucket below 0
    std::vector<std::vector<std::int64_t>> buckets_;    // [shift][value >> shift], allocated on first use
    std::vector<Range> pending_;                        // ordered by low, disjoint
    std::map<std::int64_t, std::int64_t> bounds_;       // bound -> values above it, counted in the next pass
    std::map<std::int64_t, std::int64_t> above_;        // counted
    std::map<std::int64_t, std::int64_t> at_rank_;      // resolved
};

}  // namespace inferbench
