// `inferbench merge`: copies whole results stores (the shards of a plan run on many hosts) into one. Every table of
// the schema is copied with its ids remapped (a run, a benchmark and a probe get new ids in the target; the rows
// under them follow). Idempotent: a run is recognised by its run_uid, a benchmark within its run by (ordinal,
// repeat_index), a probe by its content; merging a store again adds nothing, merging a store whose runs have gone
// on since (a resumed or requeued shard) adds what is new. One transaction on the target: a merge that fails or is
// stopped leaves the target as it was. SQL only through store::Database / Statement / Transaction, portable.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "store/results_store.hpp"

namespace inferbench::store {

// How a column's values are read and bound (its declared type in the schema).
enum class ColumnType { integer, real, text };

struct MergedColumn {
    std::string_view name;
    ColumnType type;
};

// A table as the merge copies it. `id` is its own id column, remapped (empty: none); `parent` the id it hangs from
// (run_id, benchmark_id; empty: none), bound to the parent's new id; `columns` every other column, copied as it is;
// `order` the key its rows are read and written in.
struct MergedTable {
    std::string_view name;
    std::string_view id;
    std::string_view parent;
    std::span<const MergedColumn> columns;
    std::string_view order;
};

// Every table the merge copies, parents before children. A migration that adds a table or a column must add it
// in merged_tables.cpp (tests/store/store_merge_test compares the list with the schema a new store gets).
std::span<const MergedTable> merged_tables();

// What one source brought into the target.
struct MergeCounts {
    std::int64_t runs_new = 0;        // not in the target before: copied whole
    std::int64_t runs_updated = 0;    // in the target, with benchmarks added or replaced, or the run's row newer
    std::int64_t runs_unchanged = 0;  // in the target as the source has it
    std::int64_t benchmarks_added = 0;
    std::int64_t benchmarks_replaced = 0;  // a newer record of a benchmark the target had (its rows replaced)
    std::int64_t probes_added = 0;
    std::int64_t rows_copied = 0;  // every row written into the target, of every table
    // The source's runs still running when it was read ("run 3 'sweep' (orchestrator pid 812 on gpu-07)"): merged
    // as they were then.
    std::vector<std::string> running;
};

// Thrown where MergeOptions::stop said to stop; the target's transaction is rolled back.
class MergeStopped : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct MergeOptions {
    // Asked before each benchmark is copied; true: stop (MergeStopped), the target left as it was.
    std::function<bool()> stop;
};

// Opens a store to merge from: read-only, never created, written or migrated. Throws EnvironmentError for a store
// that is missing, not an inferbench store, or of another schema version than this inferbench's.
ResultsStore open_merge_source(const std::string& location);

// Merges the stores at `sources` into `target` (opened for writing), in order, in one transaction on the target.
// Each source is opened (open_merge_source) only while it is merged, so that neither memory nor open files grow with
// their number, and read in one read transaction (one snapshot, also of a store still being written). Returns each
// source's counts. Throws (the target left as it was) EnvironmentError where a store cannot be read or written,
// MergeStopped where `options.stop` said so.
std::vector<MergeCounts> merge_stores(ResultsStore& target, std::span<const std::string> sources,
                                      const MergeOptions& options = {});

// Whether two store locations name the same store (the same file, whatever the path; else the same text).
bool same_store(const std::string& a, const std::string& b);

}  // namespace inferbench::store
