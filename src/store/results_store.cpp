#include "store/results_store.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <iterator>
#include <random>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "store/run_liveness.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace inferbench::store {
namespace {

// Column lists shared by the INSERTs and the SELECTs, in the order the row readers below expect.
constexpr std::string_view kRunColumns =
    "run_id, name, started_unix_ms, ended_unix_ms, status, plan_json, environment_json, host, "
    "git_commit, inferbench_version, orchestrator_pid, orchestrator_start_ticks, orchestrator_boot_id, "
    "orchestrator_pid_namespace, end_reason, run_uid, shard_index, shard_count";

constexpr std::string_view kBenchmarkColumns =
    "b.benchmark_id, b.run_id, b.ordinal, b.model, b.backend, b.backend_version, b.device, "
    "b.precision, b.batch_size, b.status, b.reason, b.started_unix_ms, b.ended_unix_ms, b.load_ns, "
    "b.model_path, b.model_size_bytes, b.warmup_iterations, b.measured_wall_ns, b.settings_json, "
    "b.stderr_tail, b.variant, b.repeat_index, b.convergence, b.stop_reason, b.input_tokens, b.output_tokens, "
    "b.cpu_affinity, b.concurrent_json";

constexpr std::string_view kInsertRun =
    "INSERT INTO runs (name, started_unix_ms, status, plan_json, environment_json, host, "
    "git_commit, inferbench_version, orchestrator_pid, orchestrator_start_ticks, orchestrator_boot_id, "
    "orchestrator_pid_namespace, run_uid, shard_index, shard_count) "
    "VALUES (?1, ?2, ?12, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?13, ?14, ?15) RETURNING run_id";

constexpr std::string_view kInsertBenchmark =
    "INSERT INTO benchmarks (run_id, ordinal, model, backend, backend_version, device, precision, "
    "batch_size, status, reason, started_unix_ms, ended_unix_ms, load_ns, model_path, "
    "model_size_bytes, warmup_iterations, measured_wall_ns, settings_json, stderr_tail, variant, repeat_index, "
    "convergence, stop_reason, input_tokens, output_tokens, cpu_affinity, concurrent_json) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, "
    "?24, ?25, ?26, ?27) RETURNING benchmark_id";

constexpr std::string_view kInsertMetric =
    "INSERT INTO benchmark_metrics (benchmark_id, name, value, unit) VALUES (?1, ?2, ?3, ?4)";

constexpr std::string_view kInsertSeriesValue =
    "INSERT INTO benchmark_series (benchmark_id, series, seq, value) VALUES (?1, ?2, ?3, ?4)";

constexpr std::string_view kGpuSampleColumns =
    "seq, t_ns, phase, gpu_index, power_w, power_avg_w, energy_mj, power_limit_w, temperature_c, "
    "memory_temperature_c, sm_clock_mhz, memory_clock_mhz, graphics_clock_mhz, gpu_util_pct, "
    "memory_util_pct, fb_used_mib, fb_total_mib, pcie_tx_kib_s, pcie_rx_kib_s, pstate, "
    "clock_event_reasons, process_fb_mib";

constexpr std::string_view kCpuSampleColumns =
    "seq, t_ns, phase, process_cpu_pct, process_cpu_per_core, process_rss_mib, process_peak_rss_mib, "
    "host_cpu_pct, host_memory_used_mib, host_memory_total_mib, cpu_package_energy_j";

// Runs and benchmarks both list oldest run first; run_id breaks ties of equal start times.
constexpr std::string_view kRunOrder = " ORDER BY started_unix_ms, run_id";
constexpr std::string_view kBenchmarkOrder =
    " ORDER BY r.started_unix_ms, r.run_id, b.ordinal, b.repeat_index, b.benchmark_id";

// Runs an INSERT ... RETURNING id (both dialects: SQLite's last_insert_rowid has no PostgreSQL twin) and
// readies the statement for its next use.
std::int64_t insert_returning_id(Statement& insert) {
    const bool row = insert.step();
    const std::int64_t id = row ? insert.column_int64(0) : 0;
    insert.reset();
    if (!row) throw EnvironmentError("results database: an INSERT returned no id");
    return id;
}

std::string concat(std::initializer_list<std::string_view> parts) {
    std::string text;
    for (const std::string_view part : parts) text += part;
    return text;
}

// Optional text columns: empty means "none" and is stored as NULL, so queries can test IS NULL.
void bind_optional_text(Statement& statement, int index, std::string_view value) {
    if (value.empty()) {
        statement.bind_null(index);
    } else {
        statement.bind_text(index, value);
    }
}

void bind_device_time(Statement& statement, int index, std::int64_t value_ns) {
    if (value_ns == kNotMeasured) {
        statement.bind_null(index);
    } else {
        statement.bind_int64(index, value_ns);
    }
}

// A status this inferbench does not know (another program's, or a newer inferbench's) is an error, not a
// guess: reading it as any known one would misreport the run.
[[noreturn]] void unknown_status(const std::filesystem::path& file, std::string_view what, std::int64_t id,
                                 std::string_view text, const std::string& known) {
    throw EnvironmentError(fmt::format("results database '{}': {} {} has status '{}', which this inferbench does not "
                                       "know (it knows {}); the file was written by another program or a newer "
                                       "inferbench",
                                       file.string(), what, id, text, known));
}

RunStatus stored_run_status(const std::filesystem::path& file, std::int64_t run_id, const std::string& text) {
    if (const auto status = parse_run_status(text)) return *status;
    unknown_status(file, "run", run_id, text, known_run_statuses());
}

Convergence stored_convergence(const std::filesystem::path& file, std::int64_t benchmark_id, const std::string& text) {
    if (const auto convergence = parse_convergence(text)) return *convergence;
    throw EnvironmentError(fmt::format("results database '{}': benchmark {} has convergence '{}', which this "
                                       "inferbench does not know (it knows {}); the file was written by another "
                                       "program or a newer inferbench",
                                       file.string(), benchmark_id, text, known_convergences()));
}

BenchmarkStatus stored_benchmark_status(const std::filesystem::path& file, std::int64_t benchmark_id,
                                        const std::string& text) {
    if (const auto status = parse_benchmark_status(text)) return *status;
    unknown_status(file, "benchmark", benchmark_id, text, known_benchmark_statuses());
}

std::string concurrent_to_json(const std::vector<ConcurrentBenchmark>& concurrent) {
    nlohmann::json list = nlohmann::json::array();
    for (const ConcurrentBenchmark& other : concurrent)
        list.push_back({{"ordinal", other.ordinal}, {"repeat", other.repeat}, {"device", other.device}});
    return list.dump();
}

std::vector<ConcurrentBenchmark> concurrent_from_json(const std::filesystem::path& file, std::int64_t benchmark_id,
                                                      const std::string& text) {
    std::vector<ConcurrentBenchmark> concurrent;
    try {
        for (const auto& other : nlohmann::json::parse(text))
            concurrent.push_back({other.at("ordinal").get<std::int64_t>(), other.at("repeat").get<std::int64_t>(),
                                  other.at("device").get<std::string>()});
    } catch (const nlohmann::json::exception& error) {
        throw EnvironmentError(fmt::format("results database '{}': benchmark {} has a damaged concurrent_json ({}); "
                                           "the file was written by another program",
                                           file.string(), benchmark_id, error.what()));
    }
    return concurrent;
}

// 32 hex digits from the OS's entropy: unique across hosts without any coordination.
std::string new_run_uid() {
    std::random_device entropy;
    std::string uid;
    for (int word = 0; word < 4; ++word) uid += fmt::format("{:08x}", static_cast<std::uint32_t>(entropy()));
    return uid;
}

RunRecord read_run(const std::filesystem::path& file, const Statement& row) {
    RunRecord run;
    run.run_id = row.column_int64(0);
    run.name = row.column_text(1);
    run.started_unix_ms = row.column_int64(2);
    run.ended_unix_ms = row.column_optional_int64(3);
    run.status = stored_run_status(file, run.run_id, row.column_text(4));
    run.plan_json = row.column_text(5);
    run.environment_json = row.column_text(6);
    run.host = row.column_text(7);
    run.git_commit = row.column_text(8);
    run.inferbench_version = row.column_text(9);
    if (const auto pid = row.column_optional_int64(10)) {
        run.orchestrator = ProcessIdentity{*pid, row.column_optional_int64(11).value_or(0), run.host,
                                           row.column_text(12), row.column_text(13)};
    }
    run.end_reason = row.column_text(14);
    run.uid = row.column_text(15);
    if (const auto index = row.column_optional_int64(16))
        run.shard = Shard{*index, row.column_optional_int64(17).value_or(*index)};
    judge_run(run);
    return run;
}

BenchmarkRecord read_benchmark(const std::filesystem::path& file, const Statement& row) {
    BenchmarkRecord b;
    b.benchmark_id = row.column_int64(0);
    b.run_id = row.column_int64(1);
    b.ordinal = row.column_int64(2);
    b.model = row.column_text(3);
    b.backend = row.column_text(4);
    b.backend_version = row.column_text(5);
    b.device = row.column_text(6);
    b.precision = row.column_text(7);
    b.batch_size = row.column_int64(8);
    b.status = stored_benchmark_status(file, b.benchmark_id, row.column_text(9));
    b.reason = row.column_text(10);
    b.started_unix_ms = row.column_int64(11);
    b.ended_unix_ms = row.column_int64(12);
    b.load_ns = row.column_optional_int64(13);
    b.model_path = row.column_text(14);
    b.model_size_bytes = row.column_optional_int64(15);
    b.warmup_iterations = row.column_optional_int64(16);
    b.measured_wall_ns = row.column_optional_int64(17);
    b.settings_json = row.column_text(18);
    b.stderr_tail = row.column_text(19);
    b.variant = row.column_text(20);
    b.repeat = row.column_int64(21);
    b.convergence = stored_convergence(file, b.benchmark_id, row.column_text(22));
    b.stop_reason = row.column_text(23);
    b.input_tokens = row.column_optional_int64(24).value_or(0);
    b.output_tokens = row.column_optional_int64(25).value_or(0);
    b.cpu_affinity = row.column_text(26);
    b.concurrent = concurrent_from_json(file, b.benchmark_id, row.column_text(27));
    return b;
}

// Binds the orchestrator's identity at `first` and the three parameters after it (NULLs without one).
void bind_orchestrator(Statement& statement, int first, const std::optional<ProcessIdentity>& orchestrator) {
    if (!orchestrator) {
        for (int i = first; i < first + 4; ++i) statement.bind_null(i);
        return;
    }
    statement.bind_int64(first, orchestrator->pid).bind_int64(first + 1, orchestrator->start_ticks);
    statement.bind_text(first + 2, orchestrator->boot_id).bind_text(first + 3, orchestrator->pid_namespace);
}

void bind_benchmark(Statement& insert, const BenchmarkRecord& b) {
    insert.bind_int64(1, b.run_id).bind_int64(2, b.ordinal);
    insert.bind_text(3, b.model).bind_text(4, b.backend).bind_text(5, b.backend_version);
    insert.bind_text(6, b.device).bind_text(7, b.precision).bind_int64(8, b.batch_size);
    insert.bind_text(9, to_string(b.status));
    bind_optional_text(insert, 10, b.reason);
    insert.bind_int64(11, b.started_unix_ms).bind_int64(12, b.ended_unix_ms);
    insert.bind_optional_int64(13, b.load_ns);
    bind_optional_text(insert, 14, b.model_path);
    insert.bind_optional_int64(15, b.model_size_bytes);
    insert.bind_optional_int64(16, b.warmup_iterations);
    insert.bind_optional_int64(17, b.measured_wall_ns);
    insert.bind_text(18, b.settings_json);
    bind_optional_text(insert, 19, b.stderr_tail);
    insert.bind_text(20, b.variant);
    insert.bind_int64(21, b.repeat).bind_text(22, to_string(b.convergence));
    bind_optional_text(insert, 23, b.stop_reason);
    insert.bind_optional_int64(24, b.input_tokens > 0 ? std::optional(b.input_tokens) : std::nullopt);
    insert.bind_optional_int64(25, b.output_tokens > 0 ? std::optional(b.output_tokens) : std::nullopt);
    bind_optional_text(insert, 26, b.cpu_affinity);
    insert.bind_text(27, concurrent_to_json(b.concurrent));
}

// The hot path (millions of rows): statements prepared once, inside the caller's transaction, each
// execution inserting kIterationsPerInsert rows; the rest one by one.
constexpr std::size_t kIterationsPerInsert = 64;
constexpr std::size_t kParametersPerIteration = 8;

// "INSERT ... VALUES (?1, ?2, ..., ?9), (?1, ?10, ..., ?17), ...": the benchmark id bound once.
std::string insert_iterations_sql(std::size_t rows) {
    std::string sql =
        "INSERT INTO iterations (benchmark_id, iteration, start_ns, e2e_ns, enqueue_ns, h2d_ns, compute_ns, d2h_ns, "
        "queue_ns) VALUES ";
    for (std::size_t row = 0, p = 2; row < rows; ++row, p += kParametersPerIteration)
        sql += fmt::format("{}(?1, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{})", row == 0 ? "" : ", ", p, p + 1, p + 2, p + 3,
                           p + 4, p + 5, p + 6, p + 7);
    return sql;
}

// Binds iterations[first, first + count) as rows of `insert` and runs it.
// Iteration numbers are `number_from` + the position in `iterations`.
void insert_iteration_rows(Statement& insert, std::int64_t benchmark_id, std::span<const IterationRecord> iterations,
                           std::size_t first, std::size_t count, std::int64_t number_from) {
    insert.reset();
    insert.bind_int64(1, benchmark_id);
    int parameter = 2;
    for (std::size_t i = first; i < first + count; ++i) {
        const IterationRecord& record = iterations[i];
        insert.bind_int64(parameter, number_from + static_cast<std::int64_t>(i));
        insert.bind_int64(parameter + 1, record.start_ns).bind_int64(parameter + 2, record.e2e_ns);
        bind_device_time(insert, parameter + 3, record.enqueue_ns);
        bind_device_time(insert, parameter + 4, record.h2d_ns);
        bind_device_time(insert, parameter + 5, record.compute_ns);
        bind_device_time(insert, parameter + 6, record.d2h_ns);
        bind_device_time(insert, parameter + 7, record.queue_ns);
        parameter += static_cast<int>(kParametersPerIteration);
    }
    insert.run();
    insert.reset();
}

void insert_iterations(Statement& many, Statement& one, std::int64_t benchmark_id,
                       std::span<const IterationRecord> iterations, std::int64_t number_from = 0) {
    std::size_t i = 0;
    for (; i + kIterationsPerInsert <= iterations.size(); i += kIterationsPerInsert)
        insert_iteration_rows(many, benchmark_id, iterations, i, kIterationsPerInsert, number_from);
    for (; i < iterations.size(); ++i) insert_iteration_rows(one, benchmark_id, iterations, i, 1, number_from);
}

// The benchmark's iterations in memory, then those of its spool, numbered on.
void insert_all_iterations(Statement& many, Statement& one, std::int64_t benchmark_id, const BenchmarkData& data) {
    insert_iterations(many, one, benchmark_id, data.iterations);
    if (!data.spooled_iterations) return;
    auto number = static_cast<std::int64_t>(data.iterations.size());
    data.spooled_iterations->for_each_chunk([&](std::span<const IterationRecord> chunk) {
        insert_iterations(many, one, benchmark_id, chunk, number);
        number += static_cast<std::int64_t>(chunk.size());
    });
}

// Rare and small (a few dozen rows per imported benchmark): prepared per call.
void insert_metrics(Database& db, std::int64_t benchmark_id, std::span<const Metric> metrics) {
    if (metrics.empty()) return;
    Statement insert = db.prepare(kInsertMetric);
    for (const Metric& metric : metrics) {
        insert.reset();
        insert.bind_int64(1, benchmark_id).bind_text(2, metric.name);
        insert.bind_double(3, metric.value).bind_text(4, metric.unit);
        insert.run();
    }
}

void insert_series(Database& db, std::int64_t benchmark_id, std::span<const Series> series) {
    if (series.empty()) return;
    Statement insert = db.prepare(kInsertSeriesValue);
    for (const Series& one : series) {
        std::int64_t seq = 0;
        for (const double value : one.values) {
            insert.reset();
            insert.bind_int64(1, benchmark_id).bind_text(2, one.name);
            insert.bind_int64(3, seq++).bind_double(4, value);
            insert.run();
        }
    }
}

void insert_layer_times(Database& db, std::int64_t benchmark_id, std::span<const LayerTime> layers) {
    if (layers.empty()) return;
    Statement insert = db.prepare(
        "INSERT INTO layer_times (benchmark_id, layer, node, op_type, provider, calls, total_ns, host_dispatch) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    std::int64_t layer = 0;
    for (const LayerTime& row : layers) {
        insert.reset();
        insert.bind_int64(1, benchmark_id).bind_int64(2, layer++);
        insert.bind_text(3, row.node).bind_text(4, row.op_type).bind_text(5, row.provider);
        insert.bind_int64(6, row.calls).bind_int64(7, row.total_ns).bind_int64(8, row.host_dispatch ? 1 : 0);
        insert.run();
    }
}

void insert_generations(Database& db, std::int64_t benchmark_id, std::span<const GenerationRecord> generations) {
    if (generations.empty()) return;
    Statement insert = db.prepare(
        "INSERT INTO generation_steps (benchmark_id, generation, step, end_ns, kv_cache_bytes) "
        "VALUES (?1, ?2, ?3, ?4, ?5)");
    for (const GenerationRecord& generation : generations) {
        std::int64_t step = 0;
        for (const GenerationStep& row : generation.steps) {
            insert.reset();
            insert.bind_int64(1, benchmark_id).bind_int64(2, generation.iteration).bind_int64(3, step++);
            insert.bind_int64(4, row.end_ns).bind_int64(5, row.kv_cache_bytes);
            insert.run();
        }
    }
}

void insert_pipeline_stages(Database& db, std::int64_t benchmark_id, std::span<const PipelineStageTime> stages) {
    if (stages.empty()) return;
    Statement insert = db.prepare(
        "INSERT INTO pipeline_stages (benchmark_id, iteration, stage, place, start_ns, end_ns, cpu_ns, images) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    for (const PipelineStageTime& row : stages) {
        insert.reset();
        insert.bind_int64(1, benchmark_id).bind_int64(2, row.iteration);
        insert.bind_text(3, to_string(row.stage)).bind_text(4, to_string(row.place));
        insert.bind_int64(5, row.start_ns).bind_int64(6, row.end_ns);
        if (row.cpu_ns == kStageNotMeasured)
            insert.bind_null(7);
        else
            insert.bind_int64(7, row.cpu_ns);
        insert.bind_int64(8, row.images);
        insert.run();
    }
}

// Step-major tokens (step s, sequence b at s * batch + b) stored as each sequence's positions.
void insert_generated_tokens(Database& db, std::int64_t benchmark_id, std::int64_t batch,
                             std::span<const std::int32_t> tokens) {
    if (tokens.empty() || batch <= 0) return;
    Statement insert = db.prepare(
        "INSERT INTO generated_tokens (benchmark_id, sequence, position, token) VALUES (?1, ?2, ?3, ?4)");
    const auto width = static_cast<std::size_t>(batch);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        insert.reset();
        insert.bind_int64(1, benchmark_id).bind_int64(2, static_cast<std::int64_t>(i % width));
        insert.bind_int64(3, static_cast<std::int64_t>(i / width)).bind_int64(4, tokens[i]);
        insert.run();
    }
}

// "(?1, ?2, ..., ?n)"
std::string parameter_list(int n) {
    std::string text = "(";
    for (int i = 1; i <= n; ++i) text += (i > 1 ? ", ?" : "?") + std::to_string(i);
    return text + ")";
}

std::string insert_sql(std::string_view table, std::string_view columns, int count) {
    return concat({"INSERT INTO ", table, " (benchmark_id, ", columns, ") VALUES ", parameter_list(count + 1)});
}

template <typename T>
std::optional<std::int64_t> widen(const std::optional<T>& value) {
    if (!value) return std::nullopt;
    return static_cast<std::int64_t>(*value);
}

void insert_gpu_samples(Database& db, std::int64_t benchmark_id, std::span<const GpuSample> samples) {
    if (samples.empty()) return;
    Statement insert = db.prepare(insert_sql("gpu_samples", kGpuSampleColumns, 22));
    std::int64_t seq = 0;
    for (const GpuSample& g : samples) {
        insert.reset();
        insert.bind_int64(1, benchmark_id).bind_int64(2, seq++).bind_int64(3, g.t_ns);
        insert.bind_text(4, to_string(g.phase)).bind_int64(5, g.gpu_index);
        int i = 6;
        for (const auto* value : {&g.power_w, &g.power_avg_w, &g.energy_mj, &g.power_limit_w, &g.temperature_c,
                                  &g.memory_temperature_c, &g.sm_clock_mhz, &g.memory_clock_mhz,
                                  &g.graphics_clock_mhz, &g.gpu_util_pct, &g.memory_util_pct, &g.fb_used_mib,
                                  &g.fb_total_mib, &g.pcie_tx_kib_s, &g.pcie_rx_kib_s})
            insert.bind_optional_double(i++, *value);
        insert.bind_optional_int64(i++, widen(g.pstate));
        insert.bind_optional_int64(i++, widen(g.clock_event_reasons));
        insert.bind_optional_double(i, g.process_fb_mib);
        insert.run();
    }
}

std::string per_core_text(const std::vector<double>& values) {
    if (values.empty()) return {};
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i > 0) text += ",";
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.4g", values[i]);
        text += buffer;
    }
    return text + "]";
}

std::vector<double> per_core_values(const std::string& text) {
    std::vector<double> values;
    if (text.empty()) return values;
    const auto json = nlohmann::json::parse(text, nullptr, false);
    if (!json.is_array()) return values;
    for (const auto& value : json) values.push_back(value.is_number() ? value.get<double>() : 0.0);
    return values;
}

void insert_cpu_samples(Database& db, std::int64_t benchmark_id, std::span<const CpuSample> samples) {
    if (samples.empty()) return;
    Statement insert = db.prepare(insert_sql("cpu_samples", kCpuSampleColumns, 11));
    std::int64_t seq = 0;
    for (const CpuSample& c : samples) {
        insert.reset();
        insert.bind_int64(1, benchmark_id).bind_int64(2, seq++).bind_int64(3, c.t_ns);
        insert.bind_text(4, to_string(c.phase));
        insert.bind_optional_double(5, c.process_cpu_pct);
        bind_optional_text(insert, 6, per_core_text(c.process_cpu_pct_per_core));
        insert.bind_optional_double(7, c.process_rss_mib).bind_optional_double(8, c.process_peak_rss_mib);
        insert.bind_optional_double(9, c.host_cpu_pct).bind_optional_double(10, c.host_memory_used_mib);
        insert.bind_optional_double(11, c.host_memory_total_mib).bind_optional_double(12, c.cpu_package_energy_j);
        insert.run();
    }
}

void insert_telemetry_sources(Database& db, std::int64_t benchmark_id, std::span<const TelemetrySource> sources) {
    if (sources.empty()) return;
    Statement insert = db.prepare(
        "INSERT INTO telemetry_sources (benchmark_id, source, status, detail) VALUES (?1, ?2, ?3, ?4)");
    for (const TelemetrySource& source : sources) {
        insert.reset();
        insert.bind_int64(1, benchmark_id).bind_text(2, source.source).bind_text(3, source.status);
        insert.bind_text(4, source.detail);
        insert.run();
    }
}

SamplePhase read_phase(const Statement& row, int column) {
    return sample_phase_from_string(row.column_text(column)).value_or(SamplePhase::measure);
}

// The rows of one benchmark that `sql` selects (its ?1 is the benchmark id), each made by `read`.
template <typename Read>
auto rows_of(Database& db, std::int64_t benchmark_id, std::string_view sql, Read read) {
    Statement select = db.prepare(sql);
    select.bind_int64(1, benchmark_id);
    std::vector<decltype(read(select))> result;
    while (select.step()) result.push_back(read(select));
    return result;
}

GpuSample read_gpu_sample(Statement& select) {
    GpuSample g;
    g.t_ns = select.column_int64(1);
    g.phase = read_phase(select, 2);
    g.gpu_index = static_cast<int>(select.column_int64(3));
    int column = 4;
    for (auto* value : {&g.power_w, &g.power_avg_w, &g.energy_mj, &g.power_limit_w, &g.temperature_c,
                        &g.memory_temperature_c, &g.sm_clock_mhz, &g.memory_clock_mhz, &g.graphics_clock_mhz,
                        &g.gpu_util_pct, &g.memory_util_pct, &g.fb_used_mib, &g.fb_total_mib, &g.pcie_tx_kib_s,
                        &g.pcie_rx_kib_s})
        *value = select.column_optional_double(column++);
    if (const auto pstate = select.column_optional_int64(column++)) g.pstate = static_cast<int>(*pstate);
    if (const auto bits = select.column_optional_int64(column++)) g.clock_event_reasons = static_cast<std::uint64_t>(*bits);
    g.process_fb_mib = select.column_optional_double(column);
    return g;
}

CpuSample read_cpu_sample(Statement& select) {
    CpuSample c;
    c.t_ns = select.column_int64(1);
    c.phase = read_phase(select, 2);
    c.process_cpu_pct = select.column_optional_double(3);
    c.process_cpu_pct_per_core = per_core_values(select.column_text(4));
    c.process_rss_mib = select.column_optional_double(5);
    c.process_peak_rss_mib = select.column_optional_double(6);
    c.host_cpu_pct = select.column_optional_double(7);
    c.host_memory_used_mib = select.column_optional_double(8);
    c.host_memory_total_mib = select.column_optional_double(9);
    c.cpu_package_energy_j = select.column_optional_double(10);
    return c;
}

void create_parent_directories(const std::filesystem::path& path) {
    const std::filesystem::path parent = path.parent_path();
    if (parent.empty()) return;
    std::error_code error;
    std::filesystem::create_directories(parent, error);
    if (error) {
        throw EnvironmentError("results database '" + path.string() +
                               "': cannot create directory '" + parent.string() +
                               "': " + error.message());
    }
}

// The one thing a user must hear while a command seems to hang.
WaitPolicy wait_policy() {
    WaitPolicy policy;
    policy.on_long_wait = [](const std::filesystem::path& path) {
        fmt::print(stderr, "inferbench: waiting for another writer of {} to finish; nothing measured is lost meanwhile\n",
                   path.string());
    };
    return policy;
}

// A store this process began to create and could not finish (a full disk, no inode left) is removed, so
// that no empty file is left behind to be taken for a store. Only while nothing is in it: a file another
// process made a store of meanwhile has pages, or a -wal file with its commits.
void remove_unfinished_store(const std::filesystem::path& path) noexcept {
    std::error_code error;
    const auto wal = std::filesystem::path(path.string() + "-wal");
    if (std::filesystem::file_size(path, error) != 0 || error) return;
    if (std::filesystem::exists(wal, error) && std::filesystem::file_size(wal, error) != 0) return;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        std::filesystem::remove(path.string() + suffix, error);
}

Database open_for_writing(const std::filesystem::path& path) {
    create_parent_directories(path);
    std::error_code ignored;
    const bool is_new = !std::filesystem::exists(path, ignored);
    try {
        Database db = Database::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        db.set_wait_policy(wait_policy());
        require_intact(db);
        prepare_schema(db);
        return db;
    } catch (...) {  // the connection is closed by now
        if (is_new) remove_unfinished_store(path);
        throw;
    }
}

bool can_write(const std::filesystem::path& path) {
    const std::filesystem::path parent = path.parent_path().empty() ? "." : path.parent_path();
    return ::access(path.c_str(), W_OK) == 0 && ::access(parent.c_str(), W_OK) == 0;
}

// A WAL file needs its -shm index, which a read-only folder cannot get: without a -wal file there is
// nothing but the main file to read, and SQLite may read it as immutable.
Database open_read_only(const std::filesystem::path& path) {
    try {
        Database db = Database::open(path, SQLITE_OPEN_READONLY);
        db.set_wait_policy(wait_policy());
        require_store(db);
        check_read_only_schema(db);
        return db;
    } catch (const DatabaseError& error) {
        std::error_code ignored;
        // CANTOPEN where the folder refuses the -shm file, READONLY where SQLite may not initialise it.
        const bool no_index = error.primary_code() == SQLITE_CANTOPEN || error.primary_code() == SQLITE_READONLY;
        if (!no_index || std::filesystem::exists(path.string() + "-wal", ignored)) throw;
    }
    Database db = Database::open(path, SQLITE_OPEN_READONLY, "immutable=1");
    require_store(db);
    check_read_only_schema(db);
    return db;
}

// A PostgreSQL store: reached as libpq reaches it; the server keeps it whole and lets readers read while one writes.
Database open_postgres(const StoreLocation& location, ResultsStore::Access access) {
    location.require_no_password();
    Database db = Database::open_postgres(location.url());
    // Only `run`, `import` and `probe` make a store; a reader leaves a database that is not one as it was.
    if (access != ResultsStore::Access::write) require_store(db);
    if (access == ResultsStore::Access::read_only) {
        check_read_only_schema(db);  // a merge's source: never migrated
    } else {
        prepare_schema(db);
    }
    return db;
}

Database open_for_reading(const std::filesystem::path& path) {
    if (!can_write(path)) return open_read_only(path);
    Database db = Database::open(path, SQLITE_OPEN_READWRITE);
    db.set_wait_policy(wait_policy());
    require_store(db);  // only `run`, `import` and `probe` make a store; a reader leaves a foreign file as it was
    prepare_schema(db);
    return db;
}

}  // namespace

struct ResultsStore::Impl {
    explicit Impl(Database database)
        : db(std::move(database)),
          version(store::schema_version(db)),
          insert_benchmark(db.prepare(kInsertBenchmark)),
          insert_iteration_batch(db.prepare(insert_iterations_sql(kIterationsPerInsert))),
          insert_iteration(db.prepare(insert_iterations_sql(1))) {}

    ReadCounts reads;

    std::optional<RunRecord> find_run(std::int64_t run_id) {
        Statement select = db.prepare(concat({"SELECT ", kRunColumns, " FROM runs WHERE run_id = ?1"}));
        select.bind_int64(1, run_id);
        if (!select.step()) return std::nullopt;
        return read_run(db.path(), select);
    }

    // Writes down what readers conclude anyway: a run whose orchestrator is gone is interrupted. Only where
    // the orchestrator is still the one that was judged, so that a run resumed meanwhile is left alone.
    // Best effort: a store that cannot be written now (read-only, busy) still reads back the same.
    void close_abandoned_runs() noexcept {
        try {
            std::vector<RunRecord> abandoned;
            Statement select = db.prepare(concat({"SELECT ", kRunColumns, " FROM runs WHERE status = ?1"}));
            select.bind_text(1, to_string(RunStatus::running));
            while (select.step()) {
                RunRecord run = read_run(db.path(), select);
                if (run.status == RunStatus::interrupted) abandoned.push_back(std::move(run));
            }
            for (const RunRecord& run : abandoned) {
                Statement update = db.prepare(
                    "UPDATE runs SET status = ?5, end_reason = ?1 WHERE run_id = ?2 AND status = ?6 "
                    "AND orchestrator_pid = ?3 AND orchestrator_start_ticks = ?4");
                update.bind_text(1, run.end_reason).bind_int64(2, run.run_id);
                update.bind_int64(3, run.orchestrator->pid).bind_int64(4, run.orchestrator->start_ticks);
                update.bind_text(5, to_string(run.status)).bind_text(6, to_string(RunStatus::running));
                update.run();
            }
        } catch (const std::exception&) {
        }
    }

    std::int64_t store_benchmark(const BenchmarkRecord& benchmark, const BenchmarkData& data, bool replace);

    Database db;
    int version;
    // Prepared once: add_benchmark runs per cell and may write millions of iterations.
    Statement insert_benchmark;
    Statement insert_iteration_batch;  // kIterationsPerInsert rows at a time
    Statement insert_iteration;
};

ResultsStore::ResultsStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultsStore::ResultsStore(ResultsStore&&) noexcept = default;
ResultsStore& ResultsStore::operator=(ResultsStore&&) noexcept = default;
ResultsStore::~ResultsStore() = default;

ResultsStore ResultsStore::open(const StoreLocation& location, Access access) {
    const std::filesystem::path& path = location.path();
    Database db = location.is_postgres()          ? open_postgres(location, access)
                  : access == Access::write       ? open_for_writing(path)
                  : access == Access::read_only ? open_read_only(path)
                                                : open_for_reading(path);
    auto impl = std::make_unique<Impl>(std::move(db));
    if (access == Access::write) impl->close_abandoned_runs();
    return ResultsStore(std::move(impl));
}

const std::filesystem::path& ResultsStore::path() const { return impl_->db.path(); }

int ResultsStore::schema_version() const { return impl_->version; }

Database& ResultsStore::database() { return impl_->db; }

const Database& ResultsStore::database() const { return impl_->db; }

ReadCounts ResultsStore::read_counts() const { return impl_->reads; }

void ResultsStore::give_up_waiting_when(std::function<bool()> give_up) {
    WaitPolicy policy = wait_policy();
    policy.give_up = std::move(give_up);
    impl_->db.set_wait_policy(std::move(policy));
}

std::int64_t ResultsStore::begin_run(const RunRecord& run) {
    Statement insert = impl_->db.prepare(kInsertRun);
    insert.bind_text(1, run.name).bind_int64(2, run.started_unix_ms);
    insert.bind_text(3, run.plan_json).bind_text(4, run.environment_json).bind_text(5, run.host);
    insert.bind_text(6, run.git_commit).bind_text(7, run.inferbench_version);
    bind_orchestrator(insert, 8, run.orchestrator);
    insert.bind_text(12, to_string(RunStatus::running));
    insert.bind_text(13, run.uid.empty() ? new_run_uid() : run.uid);
    if (run.shard) {
        insert.bind_int64(14, run.shard->index).bind_int64(15, run.shard->count);
    } else {
        insert.bind_null(14).bind_null(15);
    }
    return insert_returning_id(insert);
}

void ResultsStore::end_run(std::int64_t run_id, std::int64_t ended_unix_ms, RunStatus status,
                           std::string_view end_reason) {
    Statement update = impl_->db.prepare(
        "UPDATE runs SET ended_unix_ms = ?1, status = ?2, end_reason = ?3 WHERE run_id = ?4");
    update.bind_int64(1, ended_unix_ms).bind_text(2, to_string(status));
    bind_optional_text(update, 3, end_reason);
    update.bind_int64(4, run_id);
    update.run();
    if (impl_->db.changes() == 0) {
        throw EnvironmentError("results database '" + path().string() + "': no run with id " +
                               std::to_string(run_id));
    }
}

std::int64_t ResultsStore::add_benchmark(const BenchmarkRecord& benchmark,
                                         std::span<const IterationRecord> iterations) {
    return add_benchmark(benchmark, BenchmarkData{.iterations = iterations});
}

std::optional<RunRecord> ResultsStore::reopen_run(std::int64_t run_id, const ProcessIdentity& orchestrator) {
    // The write lock first: two resumes of one run cannot both pass.
    Transaction transaction(impl_->db, Transaction::Writers::one_at_a_time);
    auto run = impl_->find_run(run_id);
    if (!run) throw EnvironmentError(fmt::format("results database '{}': no run with id {}", path().string(), run_id));
    if (run->status == RunStatus::running) return run;
    Statement update = impl_->db.prepare(
        "UPDATE runs SET status = ?6, ended_unix_ms = NULL, end_reason = NULL, orchestrator_pid = ?1, "
        "orchestrator_start_ticks = ?2, orchestrator_boot_id = ?3, orchestrator_pid_namespace = ?4 WHERE run_id = ?5");
    bind_orchestrator(update, 1, orchestrator);
    update.bind_int64(5, run_id).bind_text(6, to_string(RunStatus::running));
    update.run();
    transaction.commit();
    return std::nullopt;
}

std::int64_t ResultsStore::add_benchmark(const BenchmarkRecord& benchmark, const BenchmarkData& data) {
    return impl_->store_benchmark(benchmark, data, false);
}

std::int64_t ResultsStore::replace_benchmark(const BenchmarkRecord& benchmark, const BenchmarkData& data) {
    return impl_->store_benchmark(benchmark, data, true);
}

std::int64_t ResultsStore::Impl::store_benchmark(const BenchmarkRecord& benchmark, const BenchmarkData& data,
                                                 bool replace) {
    Impl& s = *this;
    Transaction transaction(s.db);
    if (replace) {
        // The earlier attempt's iterations, samples and metrics go with it (ON DELETE CASCADE).
        Statement remove =
            s.db.prepare("DELETE FROM benchmarks WHERE run_id = ?1 AND ordinal = ?2 AND repeat_index = ?3");
        remove.bind_int64(1, benchmark.run_id).bind_int64(2, benchmark.ordinal).bind_int64(3, benchmark.repeat);
        remove.run();
    }
    s.insert_benchmark.reset();
    bind_benchmark(s.insert_benchmark, benchmark);
    const std::int64_t benchmark_id = insert_returning_id(s.insert_benchmark);
    insert_all_iterations(s.insert_iteration_batch, s.insert_iteration, benchmark_id, data);
    insert_metrics(s.db, benchmark_id, data.metrics);
    insert_series(s.db, benchmark_id, data.series);
    insert_gpu_samples(s.db, benchmark_id, data.gpu_samples);
    insert_cpu_samples(s.db, benchmark_id, data.cpu_samples);
    insert_telemetry_sources(s.db, benchmark_id, data.telemetry_sources);
    insert_layer_times(s.db, benchmark_id, data.layer_times);
    insert_generations(s.db, benchmark_id, data.generations);
    insert_generated_tokens(s.db, benchmark_id, benchmark.batch_size, data.generated_tokens);
    insert_serving(s.db, benchmark_id, data.served_requests, data.serving_workload);
    insert_pipeline_stages(s.db, benchmark_id, benchmark.pipeline_stages);
    transaction.commit();
    return benchmark_id;
}

std::vector<RunRecord> ResultsStore::runs() const {
    Statement select = impl_->db.prepare(concat({"SELECT ", kRunColumns, " FROM runs", kRunOrder}));
    std::vector<RunRecord> result;
    while (select.step()) result.push_back(read_run(path(), select));
    return result;
}

std::optional<RunRecord> ResultsStore::latest_run() const {
    Statement select = impl_->db.prepare(concat(
        {"SELECT ", kRunColumns, " FROM runs ORDER BY started_unix_ms DESC, run_id DESC LIMIT 1"}));
    if (!select.step()) return std::nullopt;
    return read_run(path(), select);
}

std::optional<RunRecord> ResultsStore::find_run(std::int64_t run_id) const { return impl_->find_run(run_id); }

std::vector<BenchmarkRecord> ResultsStore::benchmarks(std::optional<std::int64_t> run_id) const {
    // Two texts rather than "?1 IS NULL OR b.run_id = ?1", which would keep the index unused.
    const std::string_view filter = run_id ? " WHERE b.run_id = ?1" : "";
    Statement select = impl_->db.prepare(
        concat({"SELECT ", kBenchmarkColumns, " FROM benchmarks AS b JOIN runs AS r USING (run_id)",
                filter, kBenchmarkOrder}));
    if (run_id) select.bind_int64(1, *run_id);
    std::vector<BenchmarkRecord> result;
    while (select.step()) result.push_back(read_benchmark(path(), select));
    return result;
}

std::vector<IterationRecord> ResultsStore::iterations(std::int64_t benchmark_id) const {
    std::vector<IterationRecord> result;
    for_each_iteration_chunk(benchmark_id, [&](std::span<const IterationRecord> chunk) {
        result.insert(result.end(), chunk.begin(), chunk.end());
    });
    return result;
}

void ResultsStore::for_each_iteration_chunk(std::int64_t benchmark_id,
                                            const std::function<void(std::span<const IterationRecord>)>& take) const {
    ++impl_->reads.iterations;
    Statement select = impl_->db.prepare(
        "SELECT start_ns, e2e_ns, enqueue_ns, h2d_ns, compute_ns, d2h_ns, queue_ns FROM iterations "
        "WHERE benchmark_id = ?1 ORDER BY iteration");
    select.bind_int64(1, benchmark_id);
    std::vector<IterationRecord> chunk;
    chunk.reserve(IterationSpool::kChunkRecords);
    while (select.step()) {
        chunk.push_back(IterationRecord{select.column_int64(0),
                                        select.column_int64(1),
                                        select.column_optional_int64(2).value_or(kNotMeasured),
                                        select.column_optional_int64(3).value_or(kNotMeasured),
                                        select.column_optional_int64(4).value_or(kNotMeasured),
                                        select.column_optional_int64(5).value_or(kNotMeasured),
                                        select.column_optional_int64(6).value_or(kNotMeasured)});
        if (chunk.size() < IterationSpool::kChunkRecords) continue;
        take(chunk);
        chunk.clear();
    }
    if (!chunk.empty()) take(chunk);
}

std::int64_t ResultsStore::iteration_count(std::int64_t benchmark_id) const {
    Statement select = impl_->db.prepare("SELECT MAX(iteration) FROM iterations WHERE benchmark_id = ?1");
    select.bind_int64(1, benchmark_id);
    if (!select.step()) return 0;
    const auto last = select.column_optional_int64(0);
    return last ? *last + 1 : 0;
}

std::vector<Metric> ResultsStore::metrics(std::int64_t benchmark_id) const {
    return rows_of(impl_->db, benchmark_id,
                   "SELECT name, value, unit FROM benchmark_metrics WHERE benchmark_id = ?1 ORDER BY name",
                   [](Statement& select) {
                       return Metric{select.column_text(0), select.column_double(1), select.column_text(2)};
                   });
}

std::vector<Series> ResultsStore::series(std::int64_t benchmark_id) const {
    ++impl_->reads.series;
    Statement select = impl_->db.prepare(
        "SELECT series, value FROM benchmark_series WHERE benchmark_id = ?1 ORDER BY series, seq");
    select.bind_int64(1, benchmark_id);
    std::vector<Series> result;
    while (select.step()) {
        std::string name = select.column_text(0);
        if (result.empty() || result.back().name != name) result.push_back({std::move(name), {}});
        result.back().values.push_back(select.column_double(1));
    }
    return result;
}

std::vector<GpuSample> ResultsStore::gpu_samples(std::int64_t benchmark_id) const {
    ++impl_->reads.gpu_samples;
    return rows_of(impl_->db, benchmark_id,
                   concat({"SELECT ", kGpuSampleColumns, " FROM gpu_samples WHERE benchmark_id = ?1 ORDER BY seq"}),
                   read_gpu_sample);
}

std::vector<CpuSample> ResultsStore::cpu_samples(std::int64_t benchmark_id) const {
    ++impl_->reads.cpu_samples;
    return rows_of(impl_->db, benchmark_id,
                   concat({"SELECT ", kCpuSampleColumns, " FROM cpu_samples WHERE benchmark_id = ?1 ORDER BY seq"}),
                   read_cpu_sample);
}

std::vector<TelemetrySource> ResultsStore::telemetry_sources(std::int64_t benchmark_id) const {
    return rows_of(impl_->db, benchmark_id,
                   "SELECT source, status, detail FROM telemetry_sources WHERE benchmark_id = ?1 ORDER BY source",
                   [](Statement& select) {
                       return TelemetrySource{select.column_text(0), select.column_text(1), select.column_text(2)};
                   });
}

std::vector<LayerTime> ResultsStore::layer_times(std::int64_t benchmark_id) const {
    return rows_of(impl_->db, benchmark_id,
                   "SELECT node, op_type, provider, calls, total_ns, host_dispatch FROM layer_times "
                   "WHERE benchmark_id = ?1 ORDER BY layer",
                   [](Statement& select) {
                       return LayerTime{select.column_text(0),  select.column_text(1),  select.column_text(2),
                                        select.column_int64(3), select.column_int64(4), select.column_int64(5) != 0};
                   });
}

std::vector<GenerationRecord> ResultsStore::generations(std::int64_t benchmark_id) const {
    Statement select = impl_->db.prepare(
        "SELECT generation, end_ns, kv_cache_bytes FROM generation_steps WHERE benchmark_id = ?1 "
        "ORDER BY generation, step");
    select.bind_int64(1, benchmark_id);
    std::vector<GenerationRecord> result;
    while (select.step()) {
        const std::int64_t generation = select.column_int64(0);
        if (result.empty() || result.back().iteration != generation) result.push_back({generation, {}});
        result.back().steps.push_back({select.column_int64(1), select.column_int64(2)});
    }
    return result;
}

std::vector<PipelineStageTime> ResultsStore::pipeline_stages(std::int64_t benchmark_id) const {
    Statement select = impl_->db.prepare(
        "SELECT iteration, stage, place, start_ns, end_ns, cpu_ns, images FROM pipeline_stages "
        "WHERE benchmark_id = ?1 ORDER BY iteration");
    select.bind_int64(1, benchmark_id);
    std::vector<PipelineStageTime> result;
    while (select.step()) {
        const std::string stage = select.column_text(1);
        const std::string place = select.column_text(2);
        const auto stage_value = parse_pipeline_stage(stage);
        const auto place_value = parse_stage_place(place);
        if (!stage_value || !place_value)
            throw EnvironmentError(fmt::format(
                "results database '{}': benchmark {} has a pipeline stage '{}' on '{}', which this inferbench does "
                "not know; upgrade inferbench",
                path().string(), benchmark_id, stage, place));
        result.push_back({.iteration = select.column_int64(0),
                          .stage = *stage_value,
                          .place = *place_value,
                          .start_ns = select.column_int64(3),
                          .end_ns = select.column_int64(4),
                          .cpu_ns = select.column_optional_int64(5).value_or(kStageNotMeasured),
                          .images = select.column_int64(6)});
    }
    // Within a batch, in the order a batch passes the stages.
    const auto rank = [](PipelineStage stage) {
        return std::find(std::begin(kPipelineStages), std::end(kPipelineStages), stage) - std::begin(kPipelineStages);
    };
    std::stable_sort(result.begin(), result.end(), [&](const PipelineStageTime& a, const PipelineStageTime& b) {
        return a.iteration != b.iteration ? a.iteration < b.iteration : rank(a.stage) < rank(b.stage);
    });
    return result;
}

std::vector<std::vector<std::int32_t>> ResultsStore::generated_tokens(std::int64_t benchmark_id) const {
    Statement select = impl_->db.prepare(
        "SELECT sequence, token FROM generated_tokens WHERE benchmark_id = ?1 ORDER BY sequence, position");
    select.bind_int64(1, benchmark_id);
    std::vector<std::vector<std::int32_t>> result;
    while (select.step()) {
        const auto sequence = static_cast<std::size_t>(select.column_int64(0));
        if (result.size() <= sequence) result.resize(sequence + 1);
        result[sequence].push_back(static_cast<std::int32_t>(select.column_int64(1)));
    }
    return result;
}

std::vector<ServedRequest> ResultsStore::served_requests(std::int64_t benchmark_id) const {
    std::vector<ServedRequest> result;
    for_each_served_request(benchmark_id, [&](ServedRequest&& request) { result.push_back(std::move(request)); });
    return result;
}

void ResultsStore::for_each_served_request(std::int64_t benchmark_id,
                                           const std::function<void(ServedRequest&&)>& take) const {
    store::for_each_served_request(impl_->db, benchmark_id, take);
}

std::optional<ServingWorkloadRecord> ResultsStore::serving_workload(std::int64_t benchmark_id) const {
    return read_serving_workload(impl_->db, benchmark_id);
}

std::vector<std::int64_t> ResultsStore::add_probes(std::span<const ProbeRecord> probes) {
    Transaction transaction(impl_->db);
    Statement insert = impl_->db.prepare(
        "INSERT INTO device_probes (device_key, device_name, uuid, measured_unix_ms, name, value, unit, precision, "
        "details_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING probe_id");
    std::vector<std::int64_t> ids;
    for (const ProbeRecord& p : probes) {
        insert.reset();
        insert.bind_text(1, p.device_key).bind_text(2, p.device_name);
        bind_optional_text(insert, 3, p.uuid);
        insert.bind_int64(4, p.measured_unix_ms).bind_text(5, p.name).bind_double(6, p.value).bind_text(7, p.unit);
        bind_optional_text(insert, 8, p.precision);
        insert.bind_text(9, p.details_json.empty() ? "{}" : p.details_json);
        ids.push_back(insert_returning_id(insert));
    }
    transaction.commit();
    return ids;
}

std::int64_t ResultsStore::add_probe(const ProbeRecord& probe) { return add_probes(std::span(&probe, 1)).front(); }

std::vector<ProbeRecord> ResultsStore::probes(std::optional<std::string> device_key) const {
    const std::string_view filter = device_key ? " WHERE device_key = ?1" : "";
    Statement select = impl_->db.prepare(
        concat({"SELECT probe_id, device_key, device_name, uuid, measured_unix_ms, name, value, unit, precision, "
                "details_json FROM device_probes",
                filter, " ORDER BY measured_unix_ms, probe_id"}));
    if (device_key) select.bind_text(1, *device_key);
    std::vector<ProbeRecord> result;
    while (select.step()) {
        result.push_back({select.column_int64(0), select.column_text(1), select.column_text(2), select.column_text(3),
                          select.column_int64(4), select.column_text(5), select.column_double(6), select.column_text(7),
                          select.column_text(8), select.column_text(9)});
    }
    return result;
}

}  // namespace inferbench::store
