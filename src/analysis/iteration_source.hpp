// A benchmark's measured iterations as the summary reads them: walked in measured order, as many times as it
// needs, a chunk at a time. In memory (a run's unstored benchmarks, tests) or from the store through one
// cursor per walk, so summarizing a stored benchmark never holds all its iterations.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "core/spec.hpp"
#include "store/results_store.hpp"

namespace inferbench::analysis {

using IterationChunk = std::function<void(std::span<const IterationRecord>)>;

class IterationSource {
public:
    virtual ~IterationSource() = default;
    // Calls `take` with every iteration in measured order, in chunks; each call walks them all again.
    virtual void for_each_chunk(const IterationChunk& take) const = 0;
    // How many a walk will give, where known without one (then the in-order figures come with the first walk;
    // a walk that gives another count is believed instead).
    virtual std::optional<std::int64_t> count_hint() const { return std::nullopt; }
};

class IterationsInMemory final : public IterationSource {
public:
    explicit IterationsInMemory(std::span<const IterationRecord> iterations) : iterations_(iterations) {}
    void for_each_chunk(const IterationChunk& take) const override {
        if (!iterations_.empty()) take(iterations_);
    }
    std::optional<std::int64_t> count_hint() const override { return static_cast<std::int64_t>(iterations_.size()); }

private:
    std::span<const IterationRecord> iterations_;
};

class StoredIterations final : public IterationSource {
public:
    StoredIterations(const store::ResultsStore& results, std::int64_t benchmark_id)
        : results_(results), benchmark_id_(benchmark_id) {}
    void for_each_chunk(const IterationChunk& take) const override {
        results_.for_each_iteration_chunk(benchmark_id_, take);
    }
    std::optional<std::int64_t> count_hint() const override { return results_.iteration_count(benchmark_id_); }

private:
    const store::ResultsStore& results_;
    std::int64_t benchmark_id_;
};

}  // namespace inferbench::analysis
