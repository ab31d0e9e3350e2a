#include "core/statistics/order_statistics.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace inferbench {
namespace {

constexpr unsigned kTopBits = 12;  // values below 2^12 have a bucket each; above, 12 significant bits
constexpr std::size_t kPerShift = std::size_t{1} << kTopBits;

unsigned shift_of(std::uint64_t width) {
    const auto bits = static_cast<unsigned>(std::bit_width(width));
    return bits > kTopBits ? bits - kTopBits : 0;
}

std::int64_t offset(std::int64_t low, std::uint64_t steps) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + steps);
}

// The asked ranks in [below, below + count), from `ranks` ascending, starting at `next`.
std::vector<std::int64_t> ranks_within(const std::vector<std::int64_t>& ranks, std::size_t& next, std::int64_t below,
                                       std::int64_t count) {
    std::vector<std::int64_t> within;
    while (next < ranks.size() && ranks[next] < below + count) within.push_back(ranks[next++]);
    return within;
}

}  // namespace

SortedValues::SortedValues(std::span<const std::int64_t> sorted)
    : all_(sorted), holds_all_(true), count_(static_cast<std::int64_t>(sorted.size())) {}

SortedValues SortedValues::recorder(std::int64_t count) {
    SortedValues values;
    values.count_ = count;
    values.asked_ = std::make_shared<Asked>();
    return values;
}

std::int64_t SortedValues::operator[](std::int64_t rank) const {
    if (holds_all_) return all_[static_cast<std::size_t>(rank)];
    if (asked_) {
        asked_->ranks.insert(rank);
        return 0;
    }
    const auto it = at_rank_.find(rank);
    if (it == at_rank_.end()) throw std::logic_error(fmt::format("sorted values: rank {} was not selected", rank));
    return it->second;
}

std::int64_t SortedValues::count_above(std::int64_t bound) const {
    if (count_ == 0) return 0;
    if (holds_all_) return static_cast<std::int64_t>(all_.end() - std::upper_bound(all_.begin(), all_.end(), bound));
    if (asked_) {
        asked_->bounds.insert(bound);
        return 0;
    }
    const auto it = above_.find(bound);
    if (it == above_.end()) throw std::logic_error(fmt::format("sorted values: bound {} was not counted", bound));
    return it->second;
}

std::set<std::int64_t> SortedValues::asked_ranks() const { return asked_ ? asked_->ranks : std::set<std::int64_t>{}; }
std::set<std::int64_t> SortedValues::asked_bounds() const { return asked_ ? asked_->bounds : std::set<std::int64_t>{}; }

void Moments::add(std::int64_t value) {
    if (count == 0 || value < min) min = value;
    if (count == 0 || value > max) max = value;
    ++count;
    sum += value;
    const long double delta = static_cast<long double>(value) - welford_mean;
    welford_mean += delta / static_cast<long double>(count);
    squares += delta * (static_cast<long double>(value) - welford_mean);
}

double Moments::mean() const { return count == 0 ? 0.0 : static_cast<double>(sum) / static_cast<double>(count); }

double Moments::sample_stdev() const {
    return count > 1 ? static_cast<double>(std::sqrt(squares / static_cast<long double>(count - 1))) : 0.0;
}

void RankSelector::count(std::int64_t value) {
    moments_.add(value);
    if (value < 0) {
        ++negatives_;
        return;
    }
    const unsigned shift = shift_of(static_cast<std::uint64_t>(value));
    if (buckets_.size() <= shift) buckets_.resize(shift + 1);
    auto& counts = buckets_[shift];
    if (counts.empty()) counts.assign(kPerShift, 0);
    ++counts[static_cast<std::size_t>(value >> shift)];
}

void RankSelector::ask(const SortedValues& recorded) {
    const auto asked = recorded.asked_ranks();
    std::vector<std::int64_t> ranks(asked.begin(), asked.end());
    for (const std::int64_t rank : ranks)
        if (rank < 0 || rank >= moments_.count)
            throw std::logic_error(fmt::format("sorted values: rank {} of {} values", rank, moments_.count));
    for (const std::int64_t bound : recorded.asked_bounds()) bounds_[bound] = 0;
    std::vector<Range> ranges;
    std::size_t next = 0;
    std::int64_t below = 0;
    const auto bucket = [&](std::int64_t low, std::int64_t high, std::int64_t n) {
        if (n == 0) return;
        auto within = ranks_within(ranks, next, below, n);
        if (!within.empty()) ranges.push_back(Range{low, high, below, n, std::move(within), 0, {}, {}});
        below += n;
    };
    bucket(std::numeric_limits<std::int64_t>::min(), -1, negatives_);
    for (unsigned shift = 0; shift < buckets_.size(); ++shift)
        for (std::size_t i = 0; i < buckets_[shift].size(); ++i) {
            const std::int64_t low = static_cast<std::int64_t>(i) << shift;
            bucket(low, offset(low, (std::uint64_t{1} << shift) - 1), buckets_[shift][i]);
        }
    buckets_.clear();
    buckets_.shrink_to_fit();
    plan(std::move(ranges));
}

void RankSelector::plan(std::vector<Range> ranges) {
    pending_.clear();
    for (Range& range : ranges) {
        if (range.low == range.high) {
            for (const std::int64_t rank : range.ranks) at_rank_[rank] = range.low;
            continue;
        }
        if (range.count > kCollectLimit) {
            range.shift = shift_of(static_cast<std::uint64_t>(range.high) - static_cast<std::uint64_t>(range.low));
            const auto width = static_cast<std::uint64_t>(range.high) - static_cast<std::uint64_t>(range.low);
            range.counts.assign(static_cast<std::size_t>((width >> range.shift) + 1), 0);
        }
        pending_.push_back(std::move(range));
    }
}

RankSelector::Range* RankSelector::range_of(std::int64_t value) {
    auto it = std::upper_bound(pending_.begin(), pending_.end(), value,
                               [](std::int64_t v, const Range& r) { return v < r.low; });
    if (it == pending_.begin()) return nullptr;
    --it;
    return value <= it->high ? &*it : nullptr;
}

void RankSelector::take(std::int64_t value) {
    for (auto& [bound, above] : bounds_) above += value > bound ? 1 : 0;
    Range* range = range_of(value);
    if (!range) return;
    if (range->collecting()) {
        range->values.push_back(value);
    } else {
        ++range->counts[static_cast<std::size_t>((static_cast<std::uint64_t>(value) -
                                                  static_cast<std::uint64_t>(range->low)) >> range->shift)];
    }
}

void RankSelector::resolve(Range& range, std::vector<Range>& next) {
    if (range.collecting()) {
        if (static_cast<std::int64_t>(range.values.size()) != range.count)
            throw std::logic_error("sorted values: a pass gave other values than the first");
        std::sort(range.values.begin(), range.values.end());
        for (const std::int64_t rank : range.ranks) at_rank_[rank] = range.values[static_cast<std::size_t>(rank - range.below)];
        return;
    }
    std::size_t next_rank = 0;
    std::int64_t below = range.below;
    for (std::size_t j = 0; j < range.counts.size(); ++j) {
        const std::int64_t n = range.counts[j];
        if (n == 0) continue;
        auto within = ranks_within(range.ranks, next_rank, below, n);
        if (!within.empty()) {
            const std::int64_t low = offset(range.low, static_cast<std::uint64_t>(j) << range.shift);
            const std::uint64_t room = static_cast<std::uint64_t>(range.high) - static_cast<std::uint64_t>(low);
            const std::int64_t high = offset(low, std::min(room, (std::uint64_t{1} << range.shift) - 1));
            next.push_back(Range{low, high, below, n, std::move(within), 0, {}, {}});
        }
        below += n;
    }
}

void RankSelector::end_pass() {
    for (auto& [bound, above] : bounds_) above_[bound] = above;
    bounds_.clear();
    std::vector<Range> next;
    for (Range& range : pending_) resolve(range, next);
    plan(std::move(next));
}

SortedValues RankSelector::sorted() const {
    if (needs_pass()) throw std::logic_error("sorted values: asked before the passes ended");
    SortedValues values;
    values.count_ = moments_.count;
    values.at_rank_ = at_rank_;
    values.above_ = above_;
    return values;
}

}  // namespace inferbench
