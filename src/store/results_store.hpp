// The results store: runs, their benchmarks and every measured iteration, in one SQLite file or one PostgreSQL
// database (store/store_location.hpp), with the same schema, migrations and schema version in both.
// Every number carries its unit in its name. Errors throw inferbench::EnvironmentError.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/pipeline.hpp"
#include "core/process/process_identity.hpp"
#include "core/samples.hpp"
#include "core/spec.hpp"
#include "core/status.hpp"
#include "core/plan/shard.hpp"
#include "core/plan/stop_criterion.hpp"
#include "store/iteration_spool.hpp"
#include "store/store_location.hpp"
#include "store/serving_records.hpp"

namespace inferbench::store {

class Database;  // store/sqlite.hpp

// The K-th of N parts of a plan's benchmarks (`run --shard K/N`), K from 1: core/plan/shard's.
using Shard = inferbench::Shard;

// A benchmark of the same run that ran at the same time as another, on another device (`parallel: per_device`).
struct ConcurrentBenchmark {
    std::int64_t ordinal = 0;
    std::int64_t repeat = 0;
    std::string device;
    friend bool operator==(const ConcurrentBenchmark&, const ConcurrentBenchmark&) = default;
};

// One invocation of `inferbench run` (and the `run --resume` that went on with it). A running run whose
// orchestrator is known to be gone is read back as interrupted with the reason why; opening a store for
// writing records that in the file.
struct RunRecord {
    std::int64_t run_id = 0;
    std::string name;
    std::int64_t started_unix_ms = 0;
    std::optional<std::int64_t> ended_unix_ms;  // unset while running
    RunStatus status = RunStatus::running;
    std::string plan_json;
    std::string environment_json;
    std::string host;
    std::string git_commit;
    std::string inferbench_version;
    // The process writing the run; its host is `host`. Unset for imports and runs stored before schema 6.
    std::optional<ProcessIdentity> orchestrator;
    std::string end_reason;  // why it ended as it did, where it did not complete; empty otherwise
    // The run's identity in every store it is copied into: 32 hex digits, made by begin_run where empty.
    std::string uid;
    std::optional<Shard> shard;  // the part of its plan it ran (`run --shard K/N`); unset: the whole plan
};

// One cell of the matrix as it ran. Empty reason / model_path / stderr_tail are stored as NULL and read back as empty.
struct BenchmarkRecord {
    std::int64_t benchmark_id = 0;
    std::int64_t run_id = 0;
    std::int64_t ordinal = 0;  // position in the plan
    std::string model, backend, backend_version, device, precision;
    std::int64_t batch_size = 1;
    std::string variant;  // swept backend options of this cell, e.g. "cuda_graph=true"
    BenchmarkStatus status = BenchmarkStatus::failed;  // until the benchmark is judged
    std::string reason;  // why it failed or was skipped
    std::int64_t started_unix_ms = 0, ended_unix_ms = 0;
    std::optional<std::int64_t> load_ns;
    std::string model_path;
    std::optional<std::int64_t> model_size_bytes;
    std::optional<std::int64_t> warmup_iterations;
    std::optional<std::int64_t> measured_wall_ns;
    std::string settings_json;  // the spec's settings and backend options
    std::string stderr_tail;
    std::int64_t repeat = 0;  // which of the cell's repeats (the run's `repeats`), from 0
    Convergence convergence = Convergence::fixed;  // whether its stopping criterion was met
    std::string stop_reason;  // what the criterion saw when the loop ended; empty for fixed
    // A generative cell's lengths (core/generation); 0 for every other benchmark.
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    // The CPU cores its worker was pinned to, as a Linux CPU list ("0-7,16-23"); empty: not pinned.
    std::string cpu_affinity;
    // The run's benchmarks whose time overlapped this one's (between start and end), on other devices; empty: it
    // ran alone. A reader can tell a figure measured beside another GPU's work from one measured alone.
    std::vector<ConcurrentBenchmark> concurrent;
    // An image pipeline cell's stage times, every stage of every measured batch (core/pipeline.hpp), inserted with
    // the row in its one transaction; read back with ResultsStore::pipeline_stages(), never filled by a read of
    // the row. Empty for every other benchmark.
    std::vector<PipelineStageTime> pipeline_stages;
};

// A figure of a benchmark that has no per-iteration rows behind it, e.g. trtexec's own mean of GPU
// compute time read from its log: name "gpu_compute_mean_ms", value 33.664, unit "ms".
struct Metric {
    std::string name;
    double value = 0;
    std::string unit;
};

// The value of the metric named `name`, where one was stored.
inline std::optional<double> find_metric(std::span<const Metric> metrics, std::string_view name) {
    for (const auto& metric : metrics)
        if (metric.name == name) return metric.value;
    return std::nullopt;
}

// A short numbered sequence of one benchmark, e.g. trtexec's "Average on 10 runs" GPU latencies.
struct Series {
    std::string name;  // with its unit: "gpu_latency_ms"
    std::vector<double> values;
};

// Everything measured for one benchmark besides its row, written in the same transaction.
struct BenchmarkData {
    std::span<const IterationRecord> iterations = {};
    // More iterations, after `iterations` and numbered on from them, read from their spool in chunks.
    const IterationSpool* spooled_iterations = nullptr;
    std::span<const Metric> metrics = {};   // names unique within the benchmark
    std::span<const Series> series = {};    // names unique within the benchmark
    std::span<const GpuSample> gpu_samples = {};
    std::span<const CpuSample> cpu_samples = {};
    std::span<const TelemetrySource> telemetry_sources = {};  // source names unique within the benchmark
    std::span<const LayerTime> layer_times = {};  // a backend's per-layer profile, in the order the nodes first ran
    // A generative benchmark's steps, each generation numbered by its iteration.
    std::span<const GenerationRecord> generations = {};
    // The tokens of its first measured generation, step-major: token of sequence b at step s at
    // [s * batch + b] (batch = the benchmark's batch_size).
    std::span<const std::int32_t> generated_tokens = {};
    // A serving cell's requests (warm-up ones included), each with its chunks, stored in this order; and the
    // workload it sent with its SLOs (store/serving_records.hpp).
    std::span<const ServedRequest> served_requests = {};
    const ServingWorkloadRecord* serving_workload = nullptr;
};

// A benchmark with everything measured for it, owned (BenchmarkData only views): what a run keeps in
// memory when the store cannot take it.
struct MeasuredBenchmark {
    BenchmarkRecord record;
    std::vector<IterationRecord> iterations;
    std::vector<Metric> metrics;
    std::vector<GpuSample> gpu_samples;
    std::vector<CpuSample> cpu_samples;
    std::vector<TelemetrySource> telemetry_sources;
    std::vector<LayerTime> layer_times;
    std::vector<Series> series = {};  // e.g. the server's find_peak steps, an imported log's averages
    std::shared_ptr<const IterationSpool> spooled_iterations = {};  // after `iterations`: a drained loop's
    std::vector<GenerationRecord> generations = {};
    std::vector<std::int32_t> generated_tokens = {};
    std::vector<ServedRequest> served_requests = {};
    std::optional<ServingWorkloadRecord> serving_workload = {};

    BenchmarkData data() const {
        return {.iterations = iterations, .spooled_iterations = spooled_iterations.get(), .metrics = metrics, .series = series, .gpu_samples = gpu_samples,
                .cpu_samples = cpu_samples, .telemetry_sources = telemetry_sources, .layer_times = layer_times,
                .generations = generations, .generated_tokens = generated_tokens,
                .served_requests = served_requests, .serving_workload = serving_workload ? &*serving_workload : nullptr};
    }
};

// One measured ceiling of a device (`inferbench probe`): name "gemm_bf16", value 812.4, unit "TFLOP/s".
struct ProbeRecord {
    std::int64_t probe_id = 0;
    std::string device_key;   // catalog key ("h200-sxm"), "cpu:<model name>", or "gpu:<name>" outside the catalog
    std::string device_name;  // as the driver or /proc/cpuinfo names it
    std::string uuid;         // the GPU's UUID; empty (NULL) for CPUs
    std::int64_t measured_unix_ms = 0;
    std::string name;         // "fma_fp32", "gemm_int8", "dram_copy", "l2_read", ...
    double value = 0;
    std::string unit;         // "TFLOP/s", "TOPS" or "GB/s"
    std::string precision;    // "bf16", ...; empty (NULL) for bandwidths
    std::string details_json = "{}";
};

// How many times the per-benchmark row tables were read through one connection: each call of
// iterations(), gpu_samples(), cpu_samples() or series() counts one, whatever the rows. Readers that
// should read a benchmark's rows once (a report) are checked against it.
struct ReadCounts {
    std::int64_t iterations = 0;
    std::int64_t gpu_samples = 0;
    std::int64_t cpu_samples = 0;
    std::int64_t series = 0;
};

// One connection to one results file. Movable, not copyable, not for concurrent use from several
// threads; several stores (in one or several processes) may share one file: readers never wait
// for the writer (WAL), writers wait for each other as long as it takes (saying so on stderr once
// a wait passes 2 s), so that no measured result is dropped for a busy file.
class ResultsStore {
public:
    enum class Access {
        // Creates parent directories and the file if missing, refuses a damaged file (quick_check)
        // before writing anything, applies migrations.
        write,
        // Never creates. Opens read-only where the file or its folder cannot be written (a read-only
        // mount, file modes); elsewhere as `write` does, without the integrity check.
        read,
        // Never creates, never writes, never migrates: a store of this inferbench's schema version, opened
        // read-only; an older or newer one is refused, saying how to go on (`inferbench merge`'s sources).
        read_only,
    };
    // A PostgreSQL store (a URL) is reached as libpq reaches it; `read` and `write` differ there only in that a
    // reader refuses a database that is not yet a store. A URL carrying a password is refused (UserError).
    static ResultsStore open(const StoreLocation& location, Access access = Access::write);

    ResultsStore(ResultsStore&&) noexcept;
    ResultsStore& operator=(ResultsStore&&) noexcept;
    ~ResultsStore();

    // The file, or the PostgreSQL database as "postgresql://user@host:port/db" (no secret): what messages name.
    const std::filesystem::path& path() const;
    int schema_version() const;
    // The connection, for table-level SQL written against store/sqlite.hpp (both dialects); e.g. to copy rows
    // between stores. Not for use while another call of this store is in progress.
    Database& database();
    const Database& database() const;
    ReadCounts read_counts() const;
    // Ends a wait for another writer with an error when `give_up` says so (e.g. on Ctrl-C).
    void give_up_waiting_when(std::function<bool()> give_up);

    // Returns run_id; the run is stored as running (run.run_id, .status, .ended_unix_ms and .end_reason
    // are ignored).
    std::int64_t begin_run(const RunRecord& run);
    // Throws if run_id does not exist.
    void end_run(std::int64_t run_id, std::int64_t ended_unix_ms, RunStatus status,
                 std::string_view end_reason = {});
    // Sets an ended run running again, written by `orchestrator` (to resume it), and returns nothing. Where
    // another orchestrator may still be writing it (a second resume that won the write lock first), changes
    // nothing and returns the run as it is, for the caller to refuse as it refuses any run still running.
    // Throws EnvironmentError if there is no such run.
    [[nodiscard]] std::optional<RunRecord> reopen_run(std::int64_t run_id, const ProcessIdentity& orchestrator);

    // One transaction per finished benchmark: the row and everything measured for it, so a crash loses
    // at most the benchmark in flight. Iteration numbers are the positions in `iterations`, from 0;
    // device times equal to kNotMeasured are stored as NULL. benchmark.benchmark_id is ignored.
    // Returns benchmark_id.
    std::int64_t add_benchmark(const BenchmarkRecord& benchmark, const BenchmarkData& data);
    // The same for a benchmark that has iterations alone.
    std::int64_t add_benchmark(const BenchmarkRecord& benchmark, std::span<const IterationRecord> iterations = {});
    // add_benchmark that, in the same transaction, deletes the run's earlier records of the same ordinal
    // and repeat (a resumed cell's failed or interrupted attempt), so that each repeat of a cell has one
    // record per run.
    std::int64_t replace_benchmark(const BenchmarkRecord& benchmark, const BenchmarkData& data);

    std::vector<RunRecord> runs() const;  // oldest first
    std::optional<RunRecord> latest_run() const;
    std::optional<RunRecord> find_run(std::int64_t run_id) const;
    // Ordered by run (oldest first, as runs()), then ordinal, then repeat.
    std::vector<BenchmarkRecord> benchmarks(
        std::optional<std::int64_t> run_id = std::nullopt) const;
    // Ordered by iteration.
    std::vector<IterationRecord> iterations(std::int64_t benchmark_id) const;
    // The same, read with one cursor and given to `take` IterationSpool::kChunkRecords at a time: memory stays
    // one chunk whatever the count (a summary walks a long benchmark several times this way).
    void for_each_iteration_chunk(std::int64_t benchmark_id,
                                  const std::function<void(std::span<const IterationRecord>)>& take) const;
    // How many iterations the benchmark has, from its last iteration's number (numbers are positions from 0):
    // one index look-up, not a count of the rows.
    std::int64_t iteration_count(std::int64_t benchmark_id) const;
    // Ordered by name.
    std::vector<Metric> metrics(std::int64_t benchmark_id) const;
    // Ordered by name, values in their stored order.
    std::vector<Series> series(std::int64_t benchmark_id) const;
    // In stored order (by time, then GPU index as the sampler wrote them).
    std::vector<GpuSample> gpu_samples(std::int64_t benchmark_id) const;
    std::vector<CpuSample> cpu_samples(std::int64_t benchmark_id) const;
    // Ordered by source name.
    std::vector<TelemetrySource> telemetry_sources(std::int64_t benchmark_id) const;
    // In stored order (the order the nodes first ran); empty for a benchmark without a per-layer profile.
    std::vector<LayerTime> layer_times(std::int64_t benchmark_id) const;
    // A generative benchmark's generations, by iteration, each one's steps in order; empty for any other.
    std::vector<GenerationRecord> generations(std::int64_t benchmark_id) const;
    // An image pipeline benchmark's stage times, by iteration and then in the order a batch passes the stages.
    std::vector<PipelineStageTime> pipeline_stages(std::int64_t benchmark_id) const;
    // Its first measured generation's tokens, one vector per sequence (sequence 0 first); empty for any other.
    std::vector<std::vector<std::int32_t>> generated_tokens(std::int64_t benchmark_id) const;
    // A serving cell's requests in stored order (warm-up ones included), each with its chunks; empty for any
    // other benchmark. All in memory: about 200 bytes a request and 16 a chunk (100 000 chunks: 1.6 MB).
    std::vector<ServedRequest> served_requests(std::int64_t benchmark_id) const;
    // The same given to `take` one request at a time: memory holds one request whatever the count.
    void for_each_served_request(std::int64_t benchmark_id, const std::function<void(ServedRequest&&)>& take) const;
    // The workload a serving cell sent, with its SLOs; nothing for any other benchmark.
    std::optional<ServingWorkloadRecord> serving_workload(std::int64_t benchmark_id) const;

    // Device probes, all in one transaction (probe_id ignored); returns their ids in order.
    std::vector<std::int64_t> add_probes(std::span<const ProbeRecord> probes);
    std::int64_t add_probe(const ProbeRecord& probe);
    // Oldest first (by measured_unix_ms, then probe_id); of one device where device_key is given.
    std::vector<ProbeRecord> probes(std::optional<std::string> device_key = std::nullopt) const;

private:
    struct Impl;
    explicit ResultsStore(std::unique_ptr<Impl> impl);

    std::unique_ptr<Impl> impl_;
};

}  // namespace inferbench::store
