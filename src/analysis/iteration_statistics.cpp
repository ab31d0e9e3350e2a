#include "analysis/iteration_statistics.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include "core/statistics.hpp"

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

// Pass 1: the count, first and last, the in-order latency sum, and each column's buckets and moments.
void count_pass(const IterationSource& source, IterationStatistics& stats, Selectors& columns) {
    for_each_iteration(source, [&](const IterationRecord& it) {
        if (stats.count == 0) stats.first = it;
        stats.last = it;
        ++stats.count;
        stats.e2e_sum_ns += static_cast<double>(it.e2e_ns);
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

// Pass 2: the batch means in measured order (their batches need the count), with the selection's first pass.
void order_pass(const IterationSource& source, IterationStatistics& stats, Selectors& columns) {
    BatchMeans e2e(stats.count), cycles(stats.count);
    std::optional<std::int64_t> previous_start;
    stats.fastest_cycle_ns = std::numeric_limits<double>::infinity();
    const auto cycle = [&](double ns) {
        stats.fastest_cycle_ns = std::min(stats.fastest_cycle_ns, ns);
        cycles.add(ns);
    };
    select_pass(source, columns, [&](const IterationRecord& it) {
        e2e.add(static_cast<double>(it.e2e_ns));
        if (previous_start) cycle(static_cast<double>(it.start_ns - *previous_start));
        previous_start = it.start_ns;
    });
    cycle(static_cast<double>(stats.last.e2e_ns));
    stats.e2e_batch_means = e2e.interval();
    stats.cycle_batch_means = cycles.interval();
}

ColumnFigures figures_of(const RankSelector& column) { return {column.moments(), column.sorted()}; }

}  // namespace

IterationStatistics iteration_statistics(const IterationSource& source, const SortedReader& read_e2e) {
    IterationStatistics stats;
    Selectors columns;
    count_pass(source, stats, columns);
    if (stats.count == 0) return stats;
    ask_ranks(columns, read_e2e);
    if (stats.count >= 2) order_pass(source, stats, columns);
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
