// Where measured benchmarks go when their results store cannot take them (disk full, I/O error): a new
// results file elsewhere, readable by every command (`inferbench summary --db FILE`).
#pragma once

#include <filesystem>
#include <span>
#include <string>

#include "store/results_store.hpp"

namespace inferbench::store {

struct RecoveryFile {
    std::filesystem::path path;  // empty: no folder took it
    std::string error;           // why not, where path is empty
};

// The folders tried, in order: $TMPDIR (else /tmp), $HOME, the current folder.
std::vector<std::filesystem::path> recovery_folders();

// Writes `run` (as 'failed') and `benchmarks` into a new file named after `failed_store`, in the first
// of recovery_folders() that takes all of it; a folder that fails midway keeps no partial file.
RecoveryFile write_recovery_file(const std::filesystem::path& failed_store, const RunRecord& run,
                                 std::span<const MeasuredBenchmark> benchmarks);

}  // namespace inferbench::store
