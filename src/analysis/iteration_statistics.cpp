#include "analysis/iteration_statistics.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include "core/statistics/statistics.hpp"

namespace inferbench::analysis {
namespace {

enum Column : std::size_t { kE2e, kCompute, kH2d, kD2h, kQueue, kService, kColumns };

using Selectors = std::array<RankSelector, kColumns>;

// The value of each column one iteration has; kNotMeasured where it has none (e2e always has one).
std::array<std::int64_t, kColumns> columns_of(const IterationRecord& it) {
    const bool queued = it.queue_ns != kNotMeasured;
    return {it.e2e_ns, it.compute_ns, it.h2d_ns, it.d2h_ns, it.queue_ns, queued ? it.e2e_ns - it.queue_ns : kNotMeasured};
}

bool has_value(std::size_t column, std::int64_t value) { return column == kE2e || value != kNotMeasured; }

void for_each_iteration(const IterationSource& source, const std::function<void(const IterationRecord&)>& take) {
    source.for_each_chunk([&](std::span<const IterationRecord> chunk) {
        for (const IterationRecord& it : chunk) take(it);
    });
}

// The in-order figures: batch means of the latencies and of the cycle times (their batches need the count).
class InOrder {
public:
    explicit InOrder(std::int64_t count) : e2e_(count), cycles_(count) {}
    void add(const IterationRecord& it) {
        e2e_.add(static_cast<double>(it.e2e_ns));
        if (previous_start_) cycle(static_cast<double>(it.start_ns - *previous_start_));
        previous_start_ = it.start_ns;
    }
    // After the last iteration: its cycle is its latency.
    void end(IterationStatistics& stats) {
        cycle(static_cast<double>(stats.last.e2e_ns));
        stats.e2e_batch_means = e2e_.interval();
        stats.cycle_batch_means = cycles_.interval();
        stats.fastest_cycle_ns = fastest_cycle_ns_;
    }

private:
    void cycle(double ns) {
        fastest_cycle_ns_ = std::min(fastest_cycle_ns_, ns);
        cycles_.add(ns);
    }
    BatchMeans e2e_, cycles_;
    std::optional<std::int64_t> previous_start_;
    double fastest_cycle_ns_ = std::numeric_limits<double>::infinity();
};

// Pass 1: the count, first and last, the in-order latency sum, and each column's buckets and moments; the
// in-order figures too where the count was known beforehand.
void count_pass(const IterationSource& source, IterationStatistics& stats, Selectors& columns, InOrder* in_order) {
    for_each_iteration(source, [&](const IterationRecord& it) {
        if (stats.count == 0) stats.first = it;
        stats.last = it;
        ++stats.count;
        stats.e2e_sum_ns += static_cast<double>(it.e2e_ns);
        if (in_order) in_order->add(it);
        const auto values = columns_of(it);
        for (std::size_t c = 0; c < kColumns; ++c)
            if (has_value(c, values[c])) columns[c].count(values[c]);
    });
}

// The ranks each column's readers will read: they read a recorder of its count once.
void ask_ranks(Selectors& columns, const SortedReader& read_e2e) {
    for (std::size_t c = 0; c < kColumns; ++c) {
        const std::int64_t count = columns[c].moments().count;
        if (count == 0) continue;
        const SortedValues recorder = SortedValues::recorder(count);
        (void)summarize(recorder, columns[c].moments());
        if (c == kE2e && read_e2e) read_e2e(recorder);
        columns[c].ask(recorder);
    }
}

// One selection pass of the columns that need one; with `each` called on every iteration as well.
void select_pass(const IterationSource& source, Selectors& columns,
                 const std::function<void(const IterationRecord&)>& each) {
    std::array<bool, kColumns> selecting{};
    for (std::size_t c = 0; c < kColumns; ++c) selecting[c] = columns[c].needs_pass();
    for_each_iteration(source, [&](const IterationRecord& it) {
        if (each) each(it);
        const auto values = columns_of(it);
        for (std::size_t c = 0; c < kColumns; ++c)
            if (selecting[c] && has_value(c, values[c])) columns[c].take(values[c]);
    });
    for (std::size_t c = 0; c < kColumns; ++c)
        if (selecting[c]) columns[c].end_pass();
}

bool any_selecting(const Selectors& columns) {
    return std::any_of(columns.begin(), columns.end(), [](const RankSelector& c) { return c.needs_pass(); });
}

ColumnFigures figures_of(const RankSelector& column) { return {column.moments(), column.sorted()}; }

}  // namespace

IterationStatistics iteration_statistics(const IterationSource& source, const SortedReader& read_e2e) {
    IterationStatistics stats;
    Selectors columns;
    // Where the source knows its count, the in-order figures come with the first pass: with every asked rank
    // in a bucket of one value (nanosecond latencies below 4096), one pass is all.
    const std::optional<std::int64_t> expected = source.count_hint();
    std::optional<InOrder> in_order;
    if (expected) in_order.emplace(*expected);
    count_pass(source, stats, columns, in_order ? &*in_order : nullptr);
    if (stats.count == 0) return stats;
    ask_ranks(columns, read_e2e);
    if (in_order && stats.count == *expected) {
        in_order->end(stats);
    } else {
        InOrder second(stats.count);
        select_pass(source, columns, [&](const IterationRecord& it) { second.add(it); });
        second.end(stats);
    }
    while (any_selecting(columns)) select_pass(source, columns, nullptr);
    stats.e2e = figures_of(columns[kE2e]);
    stats.compute = figures_of(columns[kCompute]);
    stats.h2d = figures_of(columns[kH2d]);
    stats.d2h = figures_of(columns[kD2h]);
    stats.queue = figures_of(columns[kQueue]);
    stats.service = figures_of(columns[kService]);
    return stats;
}

}  // namespace inferbench::analysis
