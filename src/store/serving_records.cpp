#include "store/serving_records.hpp"

#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench::store {
namespace {

// "INSERT INTO table (benchmark_id, columns) VALUES (?1, ?2, ...), (?1, ...)": `rows` rows of `width` values
// after the benchmark id, which is bound once.
std::string batch_sql(std::string_view table, std::string_view columns, int width, std::size_t rows) {
    std::string sql = fmt::format("INSERT INTO {} (benchmark_id, {}) VALUES ", table, columns);
    int parameter = 2;
    for (std::size_t row = 0; row < rows; ++row) {
        sql += row == 0 ? "(?1" : ", (?1";
        for (int column = 0; column < width; ++column) sql += fmt::format(", ?{}", parameter++);
        sql += ")";
    }
    return sql;
}

// Rows buffered and inserted kRowsPerInsert per statement (the rest with one statement of their count).
template <typename Row>
class RowInserter {
public:
    using Bind = void (*)(Statement&, int first, const Row&);
    RowInserter(Database& db, std::string_view table, std::string_view columns, int width, std::int64_t benchmark_id,
                Bind bind)
        : db_(db), table_(table), columns_(columns), width_(width), benchmark_id_(benchmark_id), bind_(bind) {
        buffer_.reserve(kRowsPerInsert);
    }
    void add(const Row& row) {
        buffer_.push_back(row);
        if (buffer_.size() == kRowsPerInsert) flush();
    }
    void finish() {
        if (!buffer_.empty()) flush();
    }

private:
    void flush() {
        std::optional<Statement>& slot = buffer_.size() == kRowsPerInsert ? full_ : tail_;
        if (!slot) slot = db_.prepare(batch_sql(table_, columns_, width_, buffer_.size()));
        Statement& insert = *slot;
        insert.reset();
        insert.bind_int64(1, benchmark_id_);
        int first = 2;
        for (const Row& row : buffer_) {
            bind_(insert, first, row);
            first += width_;
        }
        insert.run();
        insert.reset();
        buffer_.clear();
    }

    Database& db_;
    std::string_view table_, columns_;
    int width_;
    std::int64_t benchmark_id_;
    Bind bind_;
    std::vector<Row> buffer_;
    std::optional<Statement> full_, tail_;
};

std::optional<std::int64_t> known(std::int64_t value, std::int64_t least = 0) {
    if (value < least) return std::nullopt;
    return value;
}
std::optional<double> known(double value) {
    if (value < 0) return std::nullopt;
    return value;
}
void bind_text_or_null(Statement& s, int index, std::string_view text) {
    if (text.empty())
        s.bind_null(index);
    else
        s.bind_text(index, text);
}

constexpr std::string_view kRequestColumns =
    "seq, request, warmup, scheduled_ns, sent_ns, end_ns, outcome, http_status, error, input_tokens, output_tokens, "
    "cached_tokens, finish_reason, server_prompt_ms, server_generation_ms";
constexpr int kRequestWidth = 15;

struct RequestRow {
    std::int64_t seq = 0;
    const ServedRequest* request = nullptr;
};

void bind_request(Statement& s, int p, const RequestRow& row) {
    const ServedRequest& r = *row.request;
    s.bind_int64(p, row.seq).bind_int64(p + 1, r.index).bind_int64(p + 2, r.warmup ? 1 : 0);
    s.bind_int64(p + 3, r.scheduled_ns).bind_int64(p + 4, r.sent_ns).bind_int64(p + 5, r.end_ns);
    s.bind_text(p + 6, to_string(r.outcome)).bind_optional_int64(p + 7, known(r.http_status, 1));
    bind_text_or_null(s, p + 8, r.error);
    s.bind_optional_int64(p + 9, known(r.input_tokens)).bind_optional_int64(p + 10, known(r.output_tokens));
    s.bind_optional_int64(p + 11, known(r.cached_tokens));
    bind_text_or_null(s, p + 12, r.finish_reason);
    s.bind_optional_double(p + 13, known(r.server_prompt_ms))
        .bind_optional_double(p + 14, known(r.server_generation_ms));
}

struct ChunkRow {
    std::int64_t seq = 0, chunk = 0;
    ServedChunk value;
};

void bind_chunk(Statement& s, int p, const ChunkRow& row) {
    s.bind_int64(p, row.seq).bind_int64(p + 1, row.chunk).bind_int64(p + 2, row.value.arrival_ns);
    s.bind_optional_int64(p + 3, known(row.value.tokens));
}

void insert_workload(Database& db, std::int64_t benchmark_id, const ServingWorkloadRecord& workload) {
    Statement insert = db.prepare(
        "INSERT INTO serving_workloads (benchmark_id, fingerprint, workload_json, slo_ttft_ns, slo_tpot_ns, "
        "slo_e2e_ns, endpoint, server_command, server_version, model_name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
        "?9, ?10)");
    insert.bind_int64(1, benchmark_id).bind_text(2, workload.fingerprint).bind_text(3, workload.json);
    insert.bind_optional_int64(4, known(workload.slos.ttft_ns, 1));
    insert.bind_optional_int64(5, known(workload.slos.tpot_ns, 1));
    insert.bind_optional_int64(6, known(workload.slos.e2e_ns, 1));
    insert.bind_text(7, workload.endpoint).bind_text(10, workload.model_name);
    // Nothing started, or a server that did not say what it is: NULL, never an empty text read as a value.
    for (const auto& [index, text] : {std::pair{8, &workload.server_command}, std::pair{9, &workload.server_version}})
        text->empty() ? insert.bind_null(index) : insert.bind_text(index, *text);
    insert.run();
}

ServedRequest read_request(const Database& db, std::int64_t benchmark_id, const Statement& row) {
    ServedRequest r;
    r.index = row.column_int64(1);
    r.warmup = row.column_int64(2) != 0;
    r.scheduled_ns = row.column_int64(3);
    r.sent_ns = row.column_int64(4);
    r.end_ns = row.column_int64(5);
    const std::string outcome = row.column_text(6);
    const auto parsed = parse_request_outcome(outcome);
    if (!parsed)
        throw EnvironmentError(
            fmt::format("results database {}: benchmark {} has a request with outcome '{}', which "
                        "this inferbench does not know; upgrade inferbench",
                        db.path().string(), benchmark_id, outcome));
    r.outcome = *parsed;
    r.http_status = row.column_optional_int64(7).value_or(0);
    r.error = row.column_text(8);
    r.input_tokens = row.column_optional_int64(9).value_or(-1);
    r.output_tokens = row.column_optional_int64(10).value_or(-1);
    r.cached_tokens = row.column_optional_int64(11).value_or(-1);
    r.finish_reason = row.column_text(12);
    r.server_prompt_ms = row.column_optional_double(13).value_or(-1);
    r.server_generation_ms = row.column_optional_double(14).value_or(-1);
    return r;
}

}  // namespace

void insert_serving(Database& db, std::int64_t benchmark_id, std::span<const ServedRequest> requests,
                    const ServingWorkloadRecord* workload) {
    if (workload) insert_workload(db, benchmark_id, *workload);
    if (requests.empty()) return;
    RowInserter<RequestRow> request_rows(db, "serving_requests", kRequestColumns, kRequestWidth, benchmark_id,
                                         bind_request);
    RowInserter<ChunkRow> chunk_rows(db, "serving_chunks", "seq, chunk, arrival_ns, tokens", 4, benchmark_id,
                                     bind_chunk);
    for (std::size_t seq = 0; seq < requests.size(); ++seq) {
        const auto s = static_cast<std::int64_t>(seq);
        request_rows.add({s, &requests[seq]});
        std::int64_t chunk = 0;
        for (const ServedChunk& value : requests[seq].chunks) chunk_rows.add({s, chunk++, value});
    }
    request_rows.finish();
    chunk_rows.finish();
}

void for_each_served_request(const Database& db, std::int64_t benchmark_id,
                             const std::function<void(ServedRequest&&)>& take) {
    Statement requests = db.prepare(
        fmt::format("SELECT {} FROM serving_requests WHERE benchmark_id = ?1 ORDER BY seq", kRequestColumns));
    requests.bind_int64(1, benchmark_id);
    Statement chunks =
        db.prepare("SELECT seq, arrival_ns, tokens FROM serving_chunks WHERE benchmark_id = ?1 ORDER BY seq, chunk");
    chunks.bind_int64(1, benchmark_id);
    bool chunk_ready = chunks.step();
    while (requests.step()) {
        const std::int64_t seq = requests.column_int64(0);
        ServedRequest request = read_request(db, benchmark_id, requests);
        while (chunk_ready && chunks.column_int64(0) <= seq) {
            if (chunks.column_int64(0) == seq)
                request.chunks.push_back({chunks.column_int64(1), chunks.column_optional_int64(2).value_or(-1)});
            chunk_ready = chunks.step();
        }
        take(std::move(request));
    }
}

std::optional<ServingWorkloadRecord> read_serving_workload(const Database& db, std::int64_t benchmark_id) {
    Statement select = db.prepare(
        "SELECT fingerprint, workload_json, slo_ttft_ns, slo_tpot_ns, slo_e2e_ns, endpoint, server_command, "
        "server_version, model_name FROM serving_workloads WHERE benchmark_id = ?1");
    select.bind_int64(1, benchmark_id);
    if (!select.step()) return std::nullopt;
    ServingWorkloadRecord workload{select.column_text(0), select.column_text(1), {}};
    workload.slos.ttft_ns = select.column_optional_int64(2).value_or(0);
    workload.slos.tpot_ns = select.column_optional_int64(3).value_or(0);
    workload.slos.e2e_ns = select.column_optional_int64(4).value_or(0);
    workload.endpoint = select.column_text(5);
    workload.server_command = select.column_text(6);  // NULL reads as ""
    workload.server_version = select.column_text(7);
    workload.model_name = select.column_text(8);
    return workload;
}

}  // namespace inferbench::store
