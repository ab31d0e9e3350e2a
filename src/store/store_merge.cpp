#include "store/store_merge.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "core/status.hpp"
#include "store/sqlite.hpp"

namespace inferbench::store {
namespace {

constexpr std::string_view kBenchmarkId = "benchmark_id";

const MergedTable& table_named(std::string_view name) {
    for (const MergedTable& table : merged_tables())
        if (table.name == name) return table;
    throw std::logic_error(fmt::format("store_merge: no table {}", name));
}

std::size_t column_index(const MergedTable& table, std::string_view name) {
    for (std::size_t i = 0; i < table.columns.size(); ++i)
        if (table.columns[i].name == name) return i;
    throw std::logic_error(fmt::format("store_merge: no column {}.{}", table.name, name));
}

// One value of a row, as read from a source and bound into the target.
struct Value {
    enum class Kind : std::uint8_t { null, integer, real, text };
    Kind kind = Kind::null;
    std::int64_t integer = 0;
    double real = 0;
    std::string text;

    bool operator==(const Value& other) const {
        if (kind != other.kind) return false;
        switch (kind) {
            case Kind::null:
                return true;
            case Kind::integer:
                return integer == other.integer;
            case Kind::real:
                return real == other.real;
            case Kind::text:
                return text == other.text;
        }
        return false;
    }
    std::optional<std::int64_t> optional_integer() const {
        return kind == Kind::integer ? std::optional(integer) : std::nullopt;
    }
};

using Row = std::vector<Value>;

void read_value(const Statement& row, int column, ColumnType type, Value& value) {
    if (row.column_is_null(column)) {
        value.kind = Value::Kind::null;
        return;
    }
    switch (type) {
        case ColumnType::integer:
            value.kind = Value::Kind::integer;
            value.integer = row.column_int64(column);
            return;
        case ColumnType::real:
            value.kind = Value::Kind::real;
            value.real = row.column_double(column);
            return;
        case ColumnType::text:
            value.kind = Value::Kind::text;
            value.text = row.column_text(column);
            return;
    }
}

// The table's columns of the current row, from result column `first` on, into values[0, columns).
void read_columns(const Statement& row, int first, const MergedTable& table, Value* values) {
    for (std::size_t i = 0; i < table.columns.size(); ++i)
        read_value(row, first + static_cast<int>(i), table.columns[i].type, values[i]);
}

void bind_value(Statement& statement, int index, const Value& value) {
    switch (value.kind) {
        case Value::Kind::null:
            statement.bind_null(index);
            return;
        case Value::Kind::integer:
            statement.bind_int64(index, value.integer);
            return;
        case Value::Kind::real:
            statement.bind_double(index, value.real);
            return;
        case Value::Kind::text:
            statement.bind_text(index, value.text);
            return;
    }
}

// A row's content as one comparable text: exact for every value (doubles in hexadecimal).
std::string content_key(const Row& row) {
    std::string key;
    for (const Value& value : row) {
        switch (value.kind) {
            case Value::Kind::null:
                key += 'n';
                break;
            case Value::Kind::integer:
                key += fmt::format("i{};", value.integer);
                break;
            case Value::Kind::real:
                key += fmt::format("r{:a};", value.real);
                break;
            case Value::Kind::text:
                key += fmt::format("t{}:{}", value.text.size(), value.text);
                break;
        }
    }
    return key;
}

std::string column_list(const MergedTable& table) {
    std::string list;
    for (const MergedColumn& column : table.columns) list += (list.empty() ? "" : ", ") + std::string(column.name);
    return list;
}

// "SELECT [id, ]columns FROM table [WHERE parent = ?1] ORDER BY key".
std::string select_sql(const MergedTable& table) {
    std::string sql = "SELECT ";
    if (!table.id.empty()) sql += fmt::format("{}, ", table.id);
    sql += fmt::format("{} FROM {}", column_list(table), table.name);
    if (!table.parent.empty()) sql += fmt::format(" WHERE {} = ?1", table.parent);
    return sql + fmt::format(" ORDER BY {}", table.order);
}

// "INSERT INTO table ([parent, ]columns) VALUES (...), (...)": the parent's id bound once, as ?1.
std::string insert_sql(const MergedTable& table, std::size_t rows) {
    const bool parent = !table.parent.empty();
    std::string sql = fmt::format("INSERT INTO {} ({}{}) VALUES ", table.name,
                                  parent ? fmt::format("{}, ", table.parent) : "", column_list(table));
    int parameter = parent ? 2 : 1;
    for (std::size_t row = 0; row < rows; ++row) {
        sql += row == 0 ? "(" : ", (";
        if (parent) sql += "?1";
        for (std::size_t column = 0; column < table.columns.size(); ++column)
            sql += fmt::format("{}?{}", parent || column > 0 ? ", " : "", parameter++);
        sql += ")";
    }
    return sql;
}

// "UPDATE table SET c1 = ?1, ..., cn = ?n WHERE id = ?n+1".
std::string update_sql(const MergedTable& table) {
    std::string sql = fmt::format("UPDATE {} SET ", table.name);
    int parameter = 1;
    for (const MergedColumn& column : table.columns) {
        sql += fmt::format("{}{} = ?{}", parameter == 1 ? "" : ", ", column.name, parameter);
        ++parameter;
    }
    return sql + fmt::format(" WHERE {} = ?{}", table.id, parameter);
}

// Rows per multi-row INSERT: about 512 parameters a statement (64 iterations, as the store writes them), well
// within every SQL engine's limit.
std::size_t rows_per_insert(const MergedTable& table) {
    return std::clamp<std::size_t>(512 / std::max<std::size_t>(table.columns.size(), 1), 1, 64);
}

// Copies the rows of one child table from a benchmark of a source to a benchmark of the target: one cursor on the
// source, multi-row prepared INSERTs on the target.
class RowCopier {
public:
    RowCopier(const MergedTable& table, Database& target)
        : table_(table),
          rows_per_insert_(rows_per_insert(table)),
          insert_many_(target.prepare(insert_sql(table, rows_per_insert_))),
          insert_one_(target.prepare(insert_sql(table, 1))),
          buffer_(rows_per_insert_ * table.columns.size()) {}

    void read_from(const Database& source) { select_.emplace(source.prepare(select_sql(table_))); }
    // Lets the source close: a statement keeps its connection open.
    void done_reading() { select_.reset(); }

    // Returns the number of rows copied.
    std::int64_t copy(std::int64_t from_benchmark, std::int64_t to_benchmark) {
        Statement& select = *select_;
        select.reset();
        select.bind_int64(1, from_benchmark);
        const std::size_t width = table_.columns.size();
        std::size_t buffered = 0;
        std::int64_t copied = 0;
        while (select.step()) {
            read_columns(select, 0, table_, &buffer_[buffered * width]);
            ++copied;
            if (++buffered < rows_per_insert_) continue;
            insert(insert_many_, to_benchmark, 0, buffered);
            buffered = 0;
        }
        select.reset();
        for (std::size_t row = 0; row < buffered; ++row) insert(insert_one_, to_benchmark, row, 1);
        return copied;
    }

private:
    void insert(Statement& statement, std::int64_t benchmark, std::size_t first_row, std::size_t rows) {
        const std::size_t width = table_.columns.size();
        statement.reset();
        statement.bind_int64(1, benchmark);
        int parameter = 2;
        for (std::size_t i = first_row * width; i < (first_row + rows) * width; ++i)
            bind_value(statement, parameter++, buffer_[i]);
        statement.run();
        statement.reset();
    }

    const MergedTable& table_;
    std::size_t rows_per_insert_;
    Statement insert_many_;
    Statement insert_one_;
    std::optional<Statement> select_;
    std::vector<Value> buffer_;
};

// A row with its own id (a run, a benchmark, a probe).
struct IdRow {
    std::int64_t id = 0;
    Row values;
};

std::vector<IdRow> read_id_rows(const Database& db, const MergedTable& table, std::optional<std::int64_t> parent) {
    Statement select = db.prepare(select_sql(table));
    if (parent) select.bind_int64(1, *parent);
    std::vector<IdRow> rows;
    while (select.step()) {
        IdRow row{select.column_int64(0), Row(table.columns.size())};
        read_columns(select, 1, table, row.values.data());
        rows.push_back(std::move(row));
    }
    return rows;
}

// Binds `values` from parameter `first` on and runs `statement` once.
void run_with(Statement& statement, const Row& values, int first) {
    int parameter = first;
    for (const Value& value : values) bind_value(statement, parameter++, value);
    statement.run();
    statement.reset();
}

// The source is read in one read transaction: one snapshot, also where a run is still writing to it (a benchmark
// it replaces meanwhile is seen either whole before or whole after).
class ReadSnapshot {
public:
    // PostgreSQL's default (read committed) takes a snapshot per statement: one for the whole read is asked for.
    explicit ReadSnapshot(Database& db) : db_(db) {
        db_.exec(db_.dialect() == Dialect::postgres ? "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY" : "BEGIN");
    }
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;
    ~ReadSnapshot() {
        try {
            db_.exec("COMMIT");  // it only read: nothing to keep or undo
        } catch (const std::exception&) {
        }
    }

private:
    Database& db_;
};

// The benchmarks of one run sharing (ordinal, repeat_index): normally one record, the latest attempt.
struct BenchmarkGroup {
    std::int64_t last_ended_unix_ms = 0;
    std::vector<std::size_t> members;  // indexes into the run's benchmarks
};

using BenchmarkKey = std::pair<std::int64_t, std::int64_t>;

class Merger {
public:
    Merger(Database& target, const MergeOptions& options)
        : target_(target),
          options_(options),
          runs_(table_named("runs")),
          benchmarks_(table_named("benchmarks")),
          probes_(table_named("device_probes")),
          run_uid_(column_index(runs_, "run_uid")),
          run_status_(column_index(runs_, "status")),
          run_started_(column_index(runs_, "started_unix_ms")),
          run_ended_(column_index(runs_, "ended_unix_ms")),
          ordinal_(column_index(benchmarks_, "ordinal")),
          repeat_(column_index(benchmarks_, "repeat_index")),
          benchmark_ended_(column_index(benchmarks_, "ended_unix_ms")),
          insert_run_(target.prepare(insert_sql(runs_, 1))),
          update_run_(target.prepare(update_sql(runs_))),
          insert_benchmark_(target.prepare(insert_sql(benchmarks_, 1))),
          delete_benchmark_(target.prepare("DELETE FROM benchmarks WHERE benchmark_id = ?1")) {
        for (const MergedTable& table : merged_tables())
            if (table.parent == kBenchmarkId) children_.emplace_back(table, target);
    }

    MergeCounts merge(ResultsStore& source) {
        MergeCounts counts;
        Database& db = source.database();
        ReadSnapshot snapshot(db);
        for (const RunRecord& run : source.runs())
            if (run.status == RunStatus::running) counts.running.push_back(describe_running(run));
        for (RowCopier& child : children_) child.read_from(db);
        for (const IdRow& run : read_id_rows(db, runs_, std::nullopt)) merge_run(db, run, counts);
        merge_probes(db, counts);
        for (RowCopier& child : children_) child.done_reading();
        return counts;
    }

private:
    static std::string describe_running(const RunRecord& run) {
        if (!run.orchestrator) return fmt::format("run {} '{}'", run.run_id, run.name);
        return fmt::format("run {} '{}' (orchestrator pid {} on {})", run.run_id, run.name, run.orchestrator->pid,
                           run.host);
    }

    void merge_run(const Database& source, const IdRow& run, MergeCounts& counts) {
        const auto benchmarks = read_id_rows(source, benchmarks_, run.id);
        const Value& uid = run.values[run_uid_];
        const auto existing = uid.kind == Value::Kind::null ? std::nullopt : find_target_run(uid);
        if (!existing) {
            run_with(insert_run_, run.values, 1);
            ++counts.rows_copied;
            ++counts.runs_new;
            const std::int64_t run_id = target_.last_insert_rowid();
            for (const IdRow& benchmark : benchmarks) copy_benchmark(benchmark, run_id, counts);
            counts.benchmarks_added += static_cast<std::int64_t>(benchmarks.size());
            return;
        }
        const TargetGroups groups = target_groups(existing->id);
        const bool newer = source_is_newer(run.values, benchmarks, existing->values, groups);
        const bool benchmarks_changed = merge_benchmarks(benchmarks, existing->id, groups, counts);
        const bool row_changed = newer && run.values != existing->values;
        if (row_changed) {
            update_run_.bind_int64(static_cast<int>(run.values.size()) + 1, existing->id);
            run_with(update_run_, run.values, 1);
        }
        ++(benchmarks_changed || row_changed ? counts.runs_updated : counts.runs_unchanged);
    }

    std::optional<IdRow> find_target_run(const Value& uid) {
        Statement select =
            target_.prepare(fmt::format("SELECT run_id, {} FROM runs WHERE run_uid = ?1", column_list(runs_)));
        bind_value(select, 1, uid);
        if (!select.step()) return std::nullopt;
        IdRow row{select.column_int64(0), Row(runs_.columns.size())};
        read_columns(select, 1, runs_, row.values.data());
        return row;
    }

    // The benchmarks of a run the target has, by (ordinal, repeat_index): the latest end and the ids.
    struct TargetGroup {
        std::int64_t last_ended_unix_ms = 0;
        std::vector<std::int64_t> ids;
    };
    using TargetGroups = std::map<BenchmarkKey, TargetGroup>;

    TargetGroups target_groups(std::int64_t run_id) {
        Statement select = target_.prepare(
            "SELECT benchmark_id, ordinal, repeat_index, ended_unix_ms FROM benchmarks WHERE run_id = ?1 "
            "ORDER BY benchmark_id");
        select.bind_int64(1, run_id);
        TargetGroups groups;
        while (select.step()) {
            TargetGroup& group = groups[{select.column_int64(1), select.column_int64(2)}];
            if (group.ids.empty() || select.column_int64(3) > group.last_ended_unix_ms)
                group.last_ended_unix_ms = select.column_int64(3);
            group.ids.push_back(select.column_int64(0));
        }
        return groups;
    }

    std::vector<std::pair<BenchmarkKey, BenchmarkGroup>> source_groups(const std::vector<IdRow>& benchmarks) const {
        std::vector<std::pair<BenchmarkKey, BenchmarkGroup>> groups;  // in the source's order
        std::map<BenchmarkKey, std::size_t> index;
        for (std::size_t i = 0; i < benchmarks.size(); ++i) {
            const Row& row = benchmarks[i].values;
            const BenchmarkKey key{row[ordinal_].integer, row[repeat_].integer};
            const auto [at, is_new] = index.emplace(key, groups.size());
            if (is_new) groups.push_back({key, {row[benchmark_ended_].integer, {}}});
            BenchmarkGroup& group = groups[at->second].second;
            group.last_ended_unix_ms = std::max(group.last_ended_unix_ms, row[benchmark_ended_].integer);
            group.members.push_back(i);
        }
        return groups;
    }

    // Adds the benchmarks the target's run lacks and replaces those the source has a newer record of (a later
    // ended_unix_ms). Returns whether anything changed.
    bool merge_benchmarks(const std::vector<IdRow>& benchmarks, std::int64_t run_id, const TargetGroups& existing,
                          MergeCounts& counts) {
        bool changed = false;
        for (const auto& [key, group] : source_groups(benchmarks)) {
            const auto found = existing.find(key);
            const bool replace = found != existing.end();
            if (replace && group.last_ended_unix_ms <= found->second.last_ended_unix_ms) continue;
            if (replace) {
                for (const std::int64_t id : found->second.ids) {  // their rows go with them (ON DELETE CASCADE)
                    delete_benchmark_.bind_int64(1, id);
                    delete_benchmark_.run();
                    delete_benchmark_.reset();
                }
            }
            for (const std::size_t i : group.members) copy_benchmark(benchmarks[i], run_id, counts);
            (replace ? counts.benchmarks_replaced : counts.benchmarks_added) +=
                static_cast<std::int64_t>(group.members.size());
            changed = true;
        }
        return changed;
    }

    // When a run last did something: its end, else its latest benchmark's end, else its start.
    std::int64_t activity(const Row& run, std::int64_t latest_benchmark_end) const {
        std::int64_t at = std::max(run[run_started_].integer, latest_benchmark_end);
        if (const auto ended = run[run_ended_].optional_integer()) at = std::max(at, *ended);
        return at;
    }

    // Whether the source's record of a run is newer than the target's, so that its row (status, end, end reason,
    // orchestrator) is taken: it did something later, or as late and has ended where the target's was running.
    bool source_is_newer(const Row& source_run, const std::vector<IdRow>& source_benchmarks, const Row& target_run,
                         const TargetGroups& target_benchmarks) const {
        std::int64_t source_latest = 0;
        for (const IdRow& benchmark : source_benchmarks)
            source_latest = std::max(source_latest, benchmark.values[benchmark_ended_].integer);
        std::int64_t target_latest = 0;
        for (const auto& [key, group] : target_benchmarks)
            target_latest = std::max(target_latest, group.last_ended_unix_ms);
        const std::int64_t source_at = activity(source_run, source_latest);
        const std::int64_t target_at = activity(target_run, target_latest);
        const std::string_view running = to_string(RunStatus::running);
        return source_at > target_at || (source_at == target_at && target_run[run_status_].text == running &&
                                         source_run[run_status_].text != running);
    }

    void copy_benchmark(const IdRow& benchmark, std::int64_t run_id, MergeCounts& counts) {
        if (options_.stop && options_.stop()) throw MergeStopped("the merge was stopped; the target is as it was");
        insert_benchmark_.bind_int64(1, run_id);
        run_with(insert_benchmark_, benchmark.values, 2);
        const std::int64_t benchmark_id = target_.last_insert_rowid();
        ++counts.rows_copied;
        for (RowCopier& child : children_) counts.rows_copied += child.copy(benchmark.id, benchmark_id);
    }

    // A probe is added unless the target has one of the same content (every column but its id).
    void merge_probes(const Database& source, MergeCounts& counts) {
        std::set<std::string> known;
        for (const IdRow& probe : read_id_rows(target_, probes_, std::nullopt)) known.insert(content_key(probe.values));
        Statement insert = target_.prepare(insert_sql(probes_, 1));
        for (const IdRow& probe : read_id_rows(source, probes_, std::nullopt)) {
            if (!known.insert(content_key(probe.values)).second) continue;
            run_with(insert, probe.values, 1);
            ++counts.probes_added;
            ++counts.rows_copied;
        }
    }

    Database& target_;
    const MergeOptions& options_;
    const MergedTable& runs_;
    const MergedTable& benchmarks_;
    const MergedTable& probes_;
    std::size_t run_uid_, run_status_, run_started_, run_ended_;
    std::size_t ordinal_, repeat_, benchmark_ended_;
    Statement insert_run_;
    Statement update_run_;
    Statement insert_benchmark_;
    Statement delete_benchmark_;
    std::vector<RowCopier> children_;
};

}  // namespace

ResultsStore open_merge_source(const std::string& location) {
    return ResultsStore::open(location, ResultsStore::Access::read_only);
}

std::vector<MergeCounts> merge_stores(ResultsStore& target, std::span<const std::string> sources,
                                      const MergeOptions& options) {
    Database& db = target.database();
    Transaction transaction(db);
    std::vector<MergeCounts> counts;
    {
        Merger merger(db, options);
        for (const std::string& location : sources) {
            ResultsStore source = open_merge_source(location);
            counts.push_back(merger.merge(source));
        }
    }
    transaction.commit();
    return counts;
}

bool same_store(const std::string& a, const std::string& b) {
    std::error_code error;
    if (std::filesystem::exists(a, error) && std::filesystem::exists(b, error))
        return std::filesystem::equivalent(a, b, error);
    const auto canonical_a = std::filesystem::weakly_canonical(a, error);
    const auto canonical_b = std::filesystem::weakly_canonical(b, error);
    return error ? a == b : canonical_a == canonical_b;
}

}  // namespace inferbench::store
