// How long `inferbench merge` takes for a plan's shards: SHARDS stores (default 100) of ITERATIONS iterations each
// (default 100,000), each shard one run of BENCHMARKS benchmarks (default 10) with 10 Hz GPU and CPU samples, are
// written through ResultsStore::add_benchmark, then merged into one store as `inferbench merge` merges them
// (store/store_merge), then merged again (which adds nothing). Prints the seconds of each step, rows per second,
// the CPU seconds each took (user + system: on a busy machine, apart from waiting) and the peak RSS.
//   build/release/bench/store_merge [SHARDS] [ITERATIONS] [BENCHMARKS] [FOLDER]
// FOLDER (default: the temporary folder) receives store-merge-bench/, removed at the end; it needs about 80 bytes of
// disk per iteration (the shards and the merged store: 0.8 GB for the default 10 M).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "store/results_store.hpp"
#include "store/store_merge.hpp"
#include "peak_rss.hpp"

namespace {

using namespace inferbench;

using bench::peak_rss_mib;

// User and system CPU seconds of this process so far: on a busy machine, what a step cost apart from waiting.
double cpu_seconds() {
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(self.ru_utime) + seconds(self.ru_stime);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Shape {
    std::int64_t shards = 100;
    std::int64_t iterations = 100'000;  // per shard
    std::int64_t benchmarks = 10;       // per shard
};

std::vector<IterationRecord> measured_loop(std::mt19937_64& random, std::int64_t count) {
    std::lognormal_distribution<double> latency(13.8, 0.3);  // about 1 ms
    std::vector<IterationRecord> records;
    records.reserve(static_cast<std::size_t>(count));
    std::int64_t start = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        const auto e2e = static_cast<std::int64_t>(latency(random));
        records.push_back(IterationRecord{start, e2e, e2e / 20, e2e / 10, e2e * 3 / 5, e2e / 10});
        start += e2e + 500;
    }
    return records;
}

// 10 Hz over the loop's time, one GPU.
void samples_of(const std::vector<IterationRecord>& loop, std::vector<GpuSample>& gpu, std::vector<CpuSample>& cpu) {
    const std::int64_t end = loop.empty() ? 0 : loop.back().start_ns + loop.back().e2e_ns;
    for (std::int64_t t = 0; t <= end; t += 100'000'000) {
        GpuSample g;
        g.t_ns = t;
        g.power_w = 300.0 + static_cast<double>(t % 7);
        g.sm_clock_mhz = 1980;
        g.gpu_util_pct = 97;
        gpu.push_back(g);
        CpuSample c;
        c.t_ns = t;
        c.process_cpu_pct = 101.5;
        c.process_rss_mib = 812;
        cpu.push_back(c);
    }
}

void write_shard(const std::filesystem::path& file, std::int64_t index, const Shape& shape) {
    std::mt19937_64 random(static_cast<std::uint64_t>(index));
    auto store = store::ResultsStore::open(file);
    store::RunRecord run;
    run.name = "shard";
    run.started_unix_ms = 1'700'000'000'000 + index;
    run.host = fmt::format("node-{:03}", index);
    run.environment_json = R"({"cpu_model":"bench CPU"})";
    run.shard = store::Shard{index, shape.shards};
    const std::int64_t run_id = store.begin_run(run);
    for (std::int64_t b = 0; b < shape.benchmarks; ++b) {
        const auto loop = measured_loop(random, shape.iterations / shape.benchmarks);
        std::vector<GpuSample> gpu;
        std::vector<CpuSample> cpu;
        samples_of(loop, gpu, cpu);
        store::BenchmarkRecord record;
        record.run_id = run_id;
        record.ordinal = (index - 1) * shape.benchmarks + b;
        record.model = "synthetic";
        record.backend = "null";
        record.device = "cuda:0";
        record.precision = "fp16";
        record.status = BenchmarkStatus::ok;
        record.settings_json = "{}";
        record.started_unix_ms = run.started_unix_ms + b;
        record.ended_unix_ms = run.started_unix_ms + b + 1;
        store.add_benchmark(record, {.iterations = loop, .gpu_samples = gpu, .cpu_samples = cpu});
    }
    store.end_run(run_id, run.started_unix_ms + shape.benchmarks + 1, RunStatus::completed);
}

std::vector<store::MergeCounts> merge(const std::vector<std::string>& shards, const std::filesystem::path& into) {
    auto target = store::ResultsStore::open(into);
    return store::merge_stores(target, shards);
}

std::int64_t rows_copied(const std::vector<store::MergeCounts>& counts) {
    std::int64_t rows = 0;
    for (const auto& c : counts) rows += c.rows_copied;
    return rows;
}

std::int64_t argument(int argc, char** argv, int index, std::int64_t fallback) {
    if (argc <= index) return fallback;
    const std::int64_t value = std::atoll(argv[index]);
    if (value > 0) return value;
    std::fprintf(stderr, "store_merge: argument %d must be a positive count, not '%s'\n", index, argv[index]);
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    Shape shape;
    shape.shards = argument(argc, argv, 1, shape.shards);
    shape.iterations = argument(argc, argv, 2, shape.iterations);
    shape.benchmarks = argument(argc, argv, 3, shape.benchmarks);
    const std::filesystem::path folder =
        (argc > 4 ? std::filesystem::path(argv[4]) : std::filesystem::temp_directory_path()) / "store-merge-bench";
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);

    auto start = std::chrono::steady_clock::now();
    std::vector<std::string> shards;
    for (std::int64_t k = 1; k <= shape.shards; ++k) {
        shards.push_back((folder / fmt::format("shard-{:03}.db", k)).string());
        write_shard(shards.back(), k, shape);
    }
    const double write_s = seconds_since(start);
    fmt::print("shards: {} x {} iterations ({} benchmarks each, 10 Hz GPU and CPU samples) written in {:.2f} s\n",
               shape.shards, shape.iterations, shape.benchmarks, write_s);

    start = std::chrono::steady_clock::now();
    double cpu = cpu_seconds();
    const auto first = merge(shards, folder / "all.db");
    const double merge_s = seconds_since(start);
    const std::int64_t rows = rows_copied(first);
    fmt::print("merge: {} shards, {} rows copied in {:.2f} s ({:.2f} M rows/s; {:.2f} CPU s), peak RSS {:.0f} MiB\n",
               shape.shards, rows, merge_s, static_cast<double>(rows) / merge_s / 1e6, cpu_seconds() - cpu,
               peak_rss_mib());

    start = std::chrono::steady_clock::now();
    cpu = cpu_seconds();
    const auto second = merge(shards, folder / "all.db");
    fmt::print("merge again: {} rows copied in {:.2f} s ({:.2f} CPU s; every run recognised, nothing added)\n",
               rows_copied(second), seconds_since(start), cpu_seconds() - cpu);
    std::error_code ignored;
    fmt::print("merged store: {:.0f} MiB\n",
               static_cast<double>(std::filesystem::file_size(folder / "all.db", ignored)) / (1024.0 * 1024.0));
    std::filesystem::remove_all(folder, ignored);
    return rows_copied(second) == 0 ? 0 : 1;
}
