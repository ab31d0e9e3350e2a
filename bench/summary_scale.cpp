// How long summarizing one long stored benchmark takes and how much memory it needs: ITERATIONS iterations
// (default 20,000,000; skewed latencies about 1 ms, a single_stream cell) are stored through an iteration spool
// (so storing them holds one chunk at a time), then the run is summarized as `inferbench run`, `summary` and
// `report` summarize it. Prints the seconds of each step and the peak RSS (getrusage ru_maxrss) after each.
//   build/release/bench/summary_scale [ITERATIONS] [FOLDER]
// FOLDER (default: the temporary folder) receives summary-scale.db, removed at the end; it needs about 40 bytes
// of disk per iteration (0.8 GB for 20 M).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "analysis/summary.hpp"
#include "core/plan/spec_json.hpp"
#include "store/iteration_spool.hpp"
#include "store/results_store.hpp"
#include "peak_rss.hpp"

namespace {

using namespace inferbench;

using bench::peak_rss_mib;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

store::BenchmarkRecord cell(std::int64_t run_id, std::int64_t wall_ns) {
    BenchmarkSpec spec;
    spec.loop.duration_ns = wall_ns;
    spec.loop.max_iterations = 0;
    store::BenchmarkRecord b;
    b.run_id = run_id;
    b.model = "synthetic";
    b.backend = "null";
    b.device = "cpu";
    b.precision = "fp32";
    b.batch_size = 1;
    b.status = BenchmarkStatus::ok;
    b.settings_json = spec_to_json(spec).dump();
    b.measured_wall_ns = wall_ns;
    return b;
}

// `count` iterations back to back, spooled a chunk at a time.
void spool_iterations(store::IterationSpool& spool, std::int64_t count) {
    std::mt19937_64 random(42);
    std::lognormal_distribution<double> latency(13.8, 0.3);  // about 1 ms
    std::vector<IterationRecord> chunk;
    std::int64_t start = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        const auto e2e = static_cast<std::int64_t>(latency(random));
        chunk.push_back(IterationRecord{start, e2e});
        start += e2e + 500;
        if (chunk.size() == store::IterationSpool::kChunkRecords || i + 1 == count) {
            spool.append(chunk);
            chunk.clear();
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::int64_t count = argc > 1 ? std::atoll(argv[1]) : 20'000'000;
    const std::filesystem::path folder = argc > 2 ? std::filesystem::path(argv[2]) : std::filesystem::temp_directory_path();
    if (count <= 0) {
        std::fprintf(stderr, "summary_scale: ITERATIONS must be a positive count, not '%s'\n", argv[1]);
        return 2;
    }
    const auto db = folder / "summary-scale.db";
    std::filesystem::remove(db);
    auto start = std::chrono::steady_clock::now();
    std::int64_t run_id = 0;
    {
        auto results = store::ResultsStore::open(db);
        store::RunRecord run;
        run.name = "summary-scale";
        run.plan_json = run.environment_json = "{}";
        run_id = results.begin_run(run);
        store::IterationSpool spool;
        spool_iterations(spool, count);
        results.add_benchmark(cell(run_id, count * 1'000'000), store::BenchmarkData{.spooled_iterations = &spool});
    }
    std::printf("stored %lld iterations: %.1f s, peak RSS %.0f MiB\n", static_cast<long long>(count),
                seconds_since(start), peak_rss_mib());
    start = std::chrono::steady_clock::now();
    const auto results = store::ResultsStore::open(db, store::ResultsStore::Access::read);
    const auto summaries = analysis::summarize_run(results, run_id);
    const auto& s = summaries.at(0);
    std::printf("summarized: %.1f s, peak RSS %.0f MiB (count %lld, mean %.1f ns, p50 %.1f ns, p99 %.1f ns, %s)\n",
                seconds_since(start), peak_rss_mib(), static_cast<long long>(s.e2e.count), s.e2e.mean, s.e2e.p50,
                s.e2e.p99, verdict_word(s.scenario.verdict).c_str());
    std::filesystem::remove(db);
    std::filesystem::remove(db.string() + "-wal");
    std::filesystem::remove(db.string() + "-shm");
    return 0;
}
