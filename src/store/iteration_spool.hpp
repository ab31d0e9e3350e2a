// Iterations kept in an unnamed temporary file until they are stored: a measured loop of any length costs
// the orchestrator one chunk of memory at a time, not one record per iteration, and what a worker measured
// before it failed is kept whatever its length. The file is in $TMPDIR (else /tmp) and has no name, so it
// goes with the process however that ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/spec.hpp"

namespace inferbench::store {

class IterationSpool {
public:
    // Records read back per chunk: 64 Ki records, 3.5 MiB.
    static constexpr std::size_t kChunkRecords = 64 * 1024;

    // Throws EnvironmentError where no temporary file can be made.
    IterationSpool();
    IterationSpool(const IterationSpool&) = delete;
    IterationSpool& operator=(const IterationSpool&) = delete;
    ~IterationSpool();

    // Appends `records` after those already kept. Throws EnvironmentError (a full disk: the records
    // appended before stay readable).
    void append(std::span<const IterationRecord> records);
    std::int64_t size() const { return count_; }
    // The first and last records; nothing while empty.
    std::optional<IterationRecord> front() const;
    std::optional<IterationRecord> back() const;
    // Calls `take` with every record in order, at most kChunkRecords at a time.
    void for_each_chunk(const std::function<void(std::span<const IterationRecord>)>& take) const;
    // Every record, in memory (for a benchmark the store could not take, which is summarized from memory).
    std::vector<IterationRecord> read_all() const;

private:
    std::optional<IterationRecord> read_one(std::int64_t index) const;
    int fd_ = -1;
    std::int64_t count_ = 0;
};

}  // namespace inferbench::store
