#include "store/schema.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include "core/error.hpp"
#include "store/sql_dialect.hpp"

namespace inferbench::store {
namespace {

// Ordered migration steps: step i (from 0) takes the schema from version i to version i + 1.
// Append only: a released step never changes, because databases in the field have already run it.
// Every number carries its unit in its column name; NULL means "not known / not measured".
constexpr const char* kMigrations[] = {
    // 1: runs, benchmarks, iterations.
    R"sql(
CREATE TABLE runs (
    run_id             INTEGER PRIMARY KEY,
    name               TEXT    NOT NULL,
    started_unix_ms    INTEGER NOT NULL,
    ended_unix_ms      INTEGER,
    status             TEXT    NOT NULL
                       CHECK (status IN ('running', 'completed', 'interrupted', 'failed')),
    plan_json          TEXT    NOT NULL,
    environment_json   TEXT    NOT NULL,
    host               TEXT    NOT NULL,
    git_commit         TEXT    NOT NULL,
    inferbench_version TEXT    NOT NULL
);

CREATE TABLE benchmarks (
    benchmark_id      INTEGER PRIMARY KEY,
    run_id            INTEGER NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    ordinal           INTEGER NOT NULL,
    model             TEXT    NOT NULL,
    backend           TEXT    NOT NULL,
    backend_version   TEXT    NOT NULL,
    device            TEXT    NOT NULL,
    precision         TEXT    NOT NULL,
    batch_size        INTEGER NOT NULL,
    variant           TEXT    NOT NULL DEFAULT '',
    status            TEXT    NOT NULL CHECK (status IN ('ok', 'failed', 'skipped', 'interrupted')),
    reason            TEXT,
    started_unix_ms   INTEGER NOT NULL,
    ended_unix_ms     INTEGER NOT NULL,
    load_ns           INTEGER,
    model_path        TEXT,
    model_size_bytes  INTEGER,
    warmup_iterations INTEGER,
    measured_wall_ns  INTEGER,
    settings_json     TEXT    NOT NULL,
    stderr_tail       TEXT
);
CREATE INDEX benchmarks_by_run ON benchmarks (run_id, ordinal);

CREATE TABLE iterations (
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    iteration    INTEGER NOT NULL,
    start_ns     INTEGER NOT NULL,
    e2e_ns       INTEGER NOT NULL,
    enqueue_ns   INTEGER,
    h2d_ns       INTEGER,
    compute_ns   INTEGER,
    d2h_ns       INTEGER,
    PRIMARY KEY (benchmark_id, iteration)
) WITHOUT ROWID;
)sql",
    // 2: figures that come without per-iteration rows (aggregates imported from a tool's log) and
    // short numbered series (trtexec's "Average on 10 runs" lines).
    R"sql(
CREATE TABLE benchmark_metrics (
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    value        REAL    NOT NULL,
    unit         TEXT    NOT NULL,
    PRIMARY KEY (benchmark_id, name)
) WITHOUT ROWID;

CREATE TABLE benchmark_series (
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    series       TEXT    NOT NULL,
    seq          INTEGER NOT NULL,
    value        REAL    NOT NULL,
    PRIMARY KEY (benchmark_id, series, seq)
) WITHOUT ROWID;
)sql",
    // 3: telemetry samples on the iterations' clock (t_ns, CLOCK_MONOTONIC), and which telemetry
    // sources worked. Every metric column is NULL where it was not read (never a fake zero).
    R"sql(
CREATE TABLE gpu_samples (
    benchmark_id          INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    seq                   INTEGER NOT NULL,
    t_ns                  INTEGER NOT NULL,
    phase                 TEXT    NOT NULL CHECK (phase IN ('load', 'warmup', 'measure', 'teardown')),
    gpu_index             INTEGER NOT NULL,
    power_w               REAL,
    power_avg_w           REAL,
    energy_mj             REAL,
    power_limit_w         REAL,
    temperature_c         REAL,
    memory_temperature_c  REAL,
    sm_clock_mhz          REAL,
    memory_clock_mhz      REAL,
    graphics_clock_mhz    REAL,
    gpu_util_pct          REAL,
    memory_util_pct       REAL,
    fb_used_mib           REAL,
    fb_total_mib          REAL,
    pcie_tx_kib_s         REAL,
    pcie_rx_kib_s         REAL,
    pstate                INTEGER,
    clock_event_reasons   INTEGER,
    process_fb_mib        REAL,
    PRIMARY KEY (benchmark_id, seq)
) WITHOUT ROWID;

CREATE TABLE cpu_samples (
    benchmark_id            INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    seq                     INTEGER NOT NULL,
    t_ns                    INTEGER NOT NULL,
    phase                   TEXT    NOT NULL CHECK (phase IN ('load', 'warmup', 'measure', 'teardown')),
    process_cpu_pct         REAL,
    process_cpu_per_core    TEXT,
    process_rss_mib         REAL,
    process_peak_rss_mib    REAL,
    host_cpu_pct            REAL,
    host_memory_used_mib    REAL,
    host_memory_total_mib   REAL,
    cpu_package_energy_j    REAL,
    PRIMARY KEY (benchmark_id, seq)
) WITHOUT ROWID;

CREATE TABLE telemetry_sources (
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    source       TEXT    NOT NULL,
    status       TEXT    NOT NULL CHECK (status IN ('ok', 'unavailable')),
    detail       TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (benchmark_id, source)
) WITHOUT ROWID;
)sql",
    // 4: measured ceilings of devices (`inferbench probe`), one row per figure: the roofline puts them
    // beside the datasheet's. device_key is the catalog key ("h200-sxm"), "cpu:<model name>" or
    // "gpu:<name>" for a GPU the catalog lacks; device_name is the name the driver or /proc gave.
    R"sql(
CREATE TABLE device_probes (
    probe_id         INTEGER PRIMARY KEY,
    device_key       TEXT    NOT NULL,
    device_name      TEXT    NOT NULL,
    uuid             TEXT,
    measured_unix_ms INTEGER NOT NULL,
    name             TEXT    NOT NULL,
    value            REAL    NOT NULL,
    unit             TEXT    NOT NULL CHECK (unit IN ('TFLOP/s', 'TOPS', 'GB/s')),
    precision        TEXT,
    details_json     TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX device_probes_by_device ON device_probes (device_key, name, measured_unix_ms);
)sql",
    // 5: per-layer times from a backend's separate profiled run (onnxruntime's layer_profile), one row per
    // node in the order the nodes first ran (layer, from 0), with the op type and provider it ran as.
    R"sql(
CREATE TABLE layer_times (
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    layer        INTEGER NOT NULL,
    node         TEXT    NOT NULL,
    op_type      TEXT    NOT NULL,
    provider     TEXT    NOT NULL,
    calls        INTEGER NOT NULL CHECK (calls > 0),
    total_ns     INTEGER NOT NULL CHECK (total_ns >= 0),
    PRIMARY KEY (benchmark_id, layer)
) WITHOUT ROWID;
)sql",
    // 6: the orchestrator writing a run (pid, start time in clock ticks after boot, kernel boot id, pid
    // namespace; its host is runs.host), so that a reader can tell a run still being written from one
    // whose orchestrator was killed; and why a run ended as it did where it did not complete.
    R"sql(
ALTER TABLE runs ADD COLUMN orchestrator_pid INTEGER;
ALTER TABLE runs ADD COLUMN orchestrator_start_ticks INTEGER;
ALTER TABLE runs ADD COLUMN orchestrator_boot_id TEXT;
ALTER TABLE runs ADD COLUMN orchestrator_pid_namespace TEXT;
ALTER TABLE runs ADD COLUMN end_reason TEXT;
)sql",
    // 7: whether a layer's time is the host's dispatch of asynchronous GPU work rather than the work (ONNX
    // Runtime's profiler on its GPU providers); rows stored before are marked by their provider.
    R"sql(
ALTER TABLE layer_times ADD COLUMN host_dispatch INTEGER NOT NULL DEFAULT 0 CHECK (host_dispatch IN (0, 1));
UPDATE layer_times SET host_dispatch = 1
 WHERE provider IN ('CUDAExecutionProvider', 'TensorrtExecutionProvider');
)sql",
    // 8: repeats and stopping criteria: which of its cell's repeats a benchmark is (0 for every
    // benchmark stored before, each cell having run once), whether its stopping criterion converged
    // ('fixed' for a fixed duration, which every earlier benchmark had) and what the criterion saw.
    R"sql(
ALTER TABLE benchmarks ADD COLUMN repeat_index INTEGER NOT NULL DEFAULT 0;
ALTER TABLE benchmarks ADD COLUMN convergence TEXT NOT NULL DEFAULT 'fixed'
    CHECK (convergence IN ('fixed', 'converged', 'not_converged'));
ALTER TABLE benchmarks ADD COLUMN stop_reason TEXT;
)sql",
    // 9: the load scenarios (core/plan/scenario_settings): a query's wait from its scheduled arrival until the
    // backend began it, so queueing shows apart from service time (e2e_ns - queue_ns). NULL where queries
    // are issued on completion (single_stream) and for everything stored before.
    R"sql(
ALTER TABLE iterations ADD COLUMN queue_ns INTEGER;
)sql",
    // 10: generative benchmarks (core/generation): the prompt and output lengths (NULL for every other
    // benchmark); each generation's steps (generation = its iteration's number; step 0 the prefill, ending when
    // every sequence's first token was in host memory, then one decode step each), with the KV cache the step
    // held; and the tokens of the first measured generation, to compare engines.
    R"sql(
ALTER TABLE benchmarks ADD COLUMN input_tokens INTEGER CHECK (input_tokens > 0);
ALTER TABLE benchmarks ADD COLUMN output_tokens INTEGER CHECK (output_tokens > 0);
CREATE TABLE generation_steps (
    benchmark_id   INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    generation     INTEGER NOT NULL,
    step           INTEGER NOT NULL,
    end_ns         INTEGER NOT NULL,
    kv_cache_bytes INTEGER NOT NULL CHECK (kv_cache_bytes >= 0),
    PRIMARY KEY (benchmark_id, generation, step)
) WITHOUT ROWID;
CREATE TABLE generated_tokens (
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    sequence     INTEGER NOT NULL,
    position     INTEGER NOT NULL,
    token        INTEGER NOT NULL,
    PRIMARY KEY (benchmark_id, sequence, position)
) WITHOUT ROWID;
)sql",
    // 11: serving cells (core/serving.hpp): every request sent to the server, warm-up ones included (warmup 1),
    // in the order the run passed them (seq), with its times on core/clock, how it ended and what the server reported
    // (NULL: not reported); every streamed chunk that carried output with its arrival time (tokens NULL: not
    // known); and the workload the cell sent (serving/workload's JSON, stored as given, for a replay) with the
    // objectives its requests are judged by (NULL: none).
    R"sql(
CREATE TABLE serving_requests (
    benchmark_id         INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    seq                  INTEGER NOT NULL,
    request              INTEGER NOT NULL,
    warmup               INTEGER NOT NULL CHECK (warmup IN (0, 1)),
    scheduled_ns         INTEGER NOT NULL,
    sent_ns              INTEGER NOT NULL,
    end_ns               INTEGER NOT NULL,
    outcome              TEXT    NOT NULL CHECK (outcome IN ('ok', 'http_status', 'connect_failed', 'timeout',
                                                             'truncated', 'server_error', 'malformed',
                                                             'wrong_token_count', 'cancelled')),
    http_status          INTEGER,
    error                TEXT,
    input_tokens         INTEGER CHECK (input_tokens >= 0),
    output_tokens        INTEGER CHECK (output_tokens >= 0),
    cached_tokens        INTEGER CHECK (cached_tokens >= 0),
    finish_reason        TEXT,
    server_prompt_ms     REAL,
    server_generation_ms REAL,
    PRIMARY KEY (benchmark_id, seq)
) WITHOUT ROWID;
CREATE TABLE serving_chunks (
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    chunk        INTEGER NOT NULL,
    arrival_ns   INTEGER NOT NULL,
    tokens       INTEGER CHECK (tokens >= 0),
    PRIMARY KEY (benchmark_id, seq, chunk)
) WITHOUT ROWID;
CREATE TABLE serving_workloads (
    benchmark_id  INTEGER PRIMARY KEY REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    fingerprint   TEXT    NOT NULL,
    workload_json TEXT    NOT NULL,
    slo_ttft_ns   INTEGER CHECK (slo_ttft_ns > 0),
    slo_tpot_ns   INTEGER CHECK (slo_tpot_ns > 0),
    slo_e2e_ns    INTEGER CHECK (slo_e2e_ns > 0),
    endpoint       TEXT NOT NULL,
    server_command TEXT,
    server_version TEXT,
    model_name     TEXT NOT NULL
);
)sql",
    // 12: fleets. A run's own identity across stores (run_uid: 32 hex digits, made when it begins; `inferbench
    // merge` recognises a run it already holds by it) and the shard of its plan it ran (`run --shard K/N`,
    // K from 1; NULL: the whole plan). A benchmark's CPU cores, where its worker was pinned ("0-7,16-23"; NULL:
    // not pinned), and the benchmarks of its run that ran at the same time on other devices (`parallel:
    // per_device`), as JSON [{"ordinal", "repeat", "device"}] ('[]': it ran alone).
    R"sql(
ALTER TABLE runs ADD COLUMN run_uid TEXT;
ALTER TABLE runs ADD COLUMN shard_index INTEGER CHECK (shard_index >= 1);
ALTER TABLE runs ADD COLUMN shard_count INTEGER CHECK (shard_count >= shard_index);
UPDATE runs SET run_uid = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX runs_by_uid ON runs (run_uid);
ALTER TABLE benchmarks ADD COLUMN cpu_affinity TEXT;
ALTER TABLE benchmarks ADD COLUMN concurrent_json TEXT NOT NULL DEFAULT '[]';
)sql",
    // 13: image pipeline cells (core/pipeline.hpp): each measured batch's time in each stage it passed (read,
    // decode, resize, normalize, infer, postprocess, nms), where the stage ran, from the first of its images entering
    // to the last leaving on core/clock, the CPU time its threads spent (NULL: not measured) and its images.
    R"sql(
CREATE TABLE pipeline_stages (
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks (benchmark_id) ON DELETE CASCADE,
    iteration    INTEGER NOT NULL,
    stage        TEXT    NOT NULL CHECK (stage IN ('read', 'decode', 'resize', 'normalize', 'infer', 'postprocess',
                                                   'nms')),
    place        TEXT    NOT NULL CHECK (place IN ('cpu', 'gpu')),
    start_ns     INTEGER NOT NULL,
    end_ns       INTEGER NOT NULL CHECK (end_ns >= start_ns),
    cpu_ns       INTEGER CHECK (cpu_ns >= 0),
    images       INTEGER NOT NULL CHECK (images >= 0),
    PRIMARY KEY (benchmark_id, iteration, stage)
) WITHOUT ROWID;
)sql",
};

constexpr int kKnownVersion = static_cast<int>(std::size(kMigrations));

// A version no inferbench writes (below 0: the file is damaged or another program's) or a newer
// binary's: refused before anything is written, so the file is left exactly as it was.
void require_known(const Database& db, int version) {
    if (version < 0) {
        throw EnvironmentError("results database " + db.path().string() + " has schema version " +
                               std::to_string(version) +
                               ", which no inferbench writes: the file is damaged or not an inferbench results "
                               "database; use another --db");
    }
    if (version <= kKnownVersion) return;
    throw EnvironmentError("results database " + db.path().string() + " has schema version " +
                           std::to_string(version) + ", this inferbench knows up to " +
                           std::to_string(kKnownVersion) + "; upgrade inferbench");
}

void enable_wal(Database& db) {
    // WAL lets reports read the file while a run writes to it. The mode is stored in the file, so
    // this is a no-op after the first open. Where WAL is refused (some network file systems)
    // SQLite keeps its rollback journal: still correct, only readers then wait for writers.
    // The switch reads the file before it needs the write lock, and SQLite answers a reader that must
    // become a writer with SQLITE_BUSY at once, without waiting: two processes creating one new file
    // together would fail here in milliseconds. Each attempt is a new statement, so it waits afresh.
    db.retry_while_busy([&db] {
        Statement statement = db.prepare("PRAGMA journal_mode = WAL");
        while (statement.step()) {
        }
    });
    // NORMAL is durable in WAL mode except for the last commits on power loss, and far faster.
    db.exec("PRAGMA synchronous = NORMAL");
}

// Applies step `target` unless another process did while we waited for the write lock.
void apply_migration(Database& db, int target) {
    Transaction transaction(db, Transaction::Writers::one_at_a_time);
    const int version = schema_version(db);
    require_known(db, version);
    if (version >= target) return;
    const char* step = kMigrations[target - 1];
    db.exec(db.dialect() == Dialect::sqlite ? std::string(step) : postgres_schema_sql(step));
    write_schema_version(db, target);
    transaction.commit();
}

// SQLite's per-connection and per-file settings; a PostgreSQL server has its own.
void configure_sqlite(Database& db) {
    // A new file gets 16 KiB pages (an existing one keeps its own): a fifth less time to store millions of
    // iterations than SQLite's 4 KiB, and fewer pages to read back.
    db.exec("PRAGMA page_size = 16384");
    enable_wal(db);
}

}  // namespace

int known_schema_version() { return kKnownVersion; }

int schema_version(const Database& db) { return read_schema_version(db); }

int prepare_schema(Database& db) {
    if (db.dialect() == Dialect::sqlite) db.exec("PRAGMA foreign_keys = ON");
    // Checked before any write, so a newer binary's file, or another program's, is left exactly as it was.
    const int version = schema_version(db);
    require_known(db, version);
    if (version == 0) require_no_foreign_tables(db);
    if (db.dialect() == Dialect::sqlite) configure_sqlite(db);
    for (int target = version + 1; target <= kKnownVersion; ++target) apply_migration(db, target);
    return schema_version(db);
}

int check_read_only_schema(const Database& db) {
    const int version = schema_version(db);
    require_known(db, version);
    if (version < kKnownVersion) {
        throw EnvironmentError("results database " + db.path().string() + " has schema version " +
                               std::to_string(version) + " and cannot be upgraded to " +
                               std::to_string(kKnownVersion) +
                               " where it is (read-only); copy it to a writable place, or open it once with "
                               "write access, and read it again");
    }
    return version;
}

void require_store(const Database& db) {
    if (schema_version(db) != 0) return;
    const bool file = db.dialect() == Dialect::sqlite;
    throw EnvironmentError("'" + db.path().string() + "' is not an inferbench results store (" +
                           (file ? "an empty file, or another program's SQLite database" : "a database without its tables") +
                           "); nothing was written to it; give --db a store that `inferbench run` or "
                           "`inferbench import` wrote");
}

void require_no_foreign_tables(const Database& db) {
    if (count_foreign_tables(db) == 0) return;
    if (db.dialect() == Dialect::postgres) {
        throw EnvironmentError("'" + db.path().string() +
                               "' holds another program's tables and is not an inferbench results store; nothing was "
                               "written to it; give --db a new database, or a schema of its own with "
                               "?options=-csearch_path%3DNAME in the URL");
    }
    throw EnvironmentError("'" + db.path().string() +
                           "' holds another program's SQLite tables and is not an inferbench results store; "
                           "nothing was written to it; give --db a new file or an inferbench store");
}

void require_intact(const Database& db) {
    if (db.dialect() == Dialect::postgres) return;  // the server keeps its own files whole
    std::string problem;
    try {
        Statement check = db.prepare("PRAGMA quick_check(1)");
        if (check.step()) problem = check.column_text(0);
    } catch (const DatabaseError& error) {
        // A file damaged enough makes the check itself fail ("database disk image is malformed").
        if (error.busy()) throw;
        problem = error.what();
    }
    if (problem == "ok") return;
    // One line: SQLite heads the list with the schema's name and a newline.
    if (const auto heading = problem.find("***\n"); heading != std::string::npos) problem.erase(0, heading + 4);
    std::replace(problem.begin(), problem.end(), '\n', ' ');
    const std::string file = db.path().string();
    throw EnvironmentError("results database " + file + " is damaged (quick_check: " + problem +
                           "); nothing was written to it; recover what it holds with `sqlite3 " + file +
                           " .recover | sqlite3 recovered.db` or use another --db");
}

}  // namespace inferbench::store
