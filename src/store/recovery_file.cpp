#include "store/recovery_file.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench::store {
namespace {

std::int64_t unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void remove_store_files(const std::filesystem::path& path) {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path.string() + suffix, ignored);
}

std::filesystem::path write_into(const std::filesystem::path& path, const RunRecord& run,
                                 std::span<const MeasuredBenchmark> benchmarks) {
    ResultsStore store = ResultsStore::open(path);
    const std::int64_t run_id = store.begin_run(run);
    for (const MeasuredBenchmark& benchmark : benchmarks) {
        BenchmarkRecord record = benchmark.record;
        record.run_id = run_id;
        store.add_benchmark(record, benchmark.data());
    }
    store.end_run(run_id, unix_ms(), RunStatus::failed);
    return path;
}

}  // namespace

std::vector<std::filesystem::path> recovery_folders() {
    std::vector<std::filesystem::path> folders;
    const char* tmpdir = std::getenv("TMPDIR");
    folders.emplace_back(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp");
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') folders.emplace_back(home);
    folders.emplace_back(".");
    return folders;
}

RecoveryFile write_recovery_file(const std::filesystem::path& failed_store, const RunRecord& run,
                                 std::span<const MeasuredBenchmark> benchmarks) {
    // The pid and time keep two runs (or two attempts of one) from meeting in one file.
    const std::string name = fmt::format("inferbench-recovery-{}-{}-{}.db", failed_store.stem().string(), ::getpid(),
                                         unix_ms());
    std::string errors;
    for (const std::filesystem::path& folder : recovery_folders()) {
        const std::filesystem::path path = folder / name;
        try {
            return {write_into(path, run, benchmarks), ""};
        } catch (const EnvironmentError& error) {
            remove_store_files(path);
            errors += (errors.empty() ? "" : "; ") + std::string(error.what());
        }
    }
    return {{}, errors};
}

}  // namespace inferbench::store
