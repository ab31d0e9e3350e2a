// A serving cell's records in the results store (schema 11): every request it sent with its chunks, and the
// workload it sent with the objectives its requests are judged by. Written inside the benchmark's one
// transaction (ResultsStore::add_benchmark); rows go in kRowsPerInsert at a time, so 100 000 chunks store in
// a fraction of a second.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "core/serving.hpp"
#include "store/sqlite.hpp"

namespace inferbench::store {

// What a serving cell sent: the workload's JSON (serving/workload's format, stored as given so a run can be
// replayed against another server), its fingerprint, and the cell's SLOs (0: none).
struct ServingWorkloadRecord {
    std::string fingerprint;
    std::string json;
    ServingSlos slos;
    // Where the requests went: the base URL, the command that started the server for the cell (empty: none), what
    // the server said it is (empty: it did not say), and the requests' "model".
    std::string endpoint = {};
    std::string server_command = {};
    std::string server_version = {};
    std::string model_name = {};
    friend bool operator==(const ServingWorkloadRecord&, const ServingWorkloadRecord&) = default;
};

inline constexpr std::size_t kRowsPerInsert = 64;

// Inserts `requests` (seq = their position) and their chunks, and the workload where given. Inside the
// caller's transaction. Values reported as unknown (-1, http_status 0, empty text) are stored as NULL.
void insert_serving(Database& db, std::int64_t benchmark_id, std::span<const ServedRequest> requests,
                    const ServingWorkloadRecord* workload);

// The benchmark's requests in stored order, each with its chunks, given to `take` one at a time: memory holds
// one request whatever their count (two cursors, requests and chunks, walked together).
void for_each_served_request(const Database& db, std::int64_t benchmark_id,
                             const std::function<void(ServedRequest&&)>& take);

std::optional<ServingWorkloadRecord> read_serving_workload(const Database& db, std::int64_t benchmark_id);

}  // namespace inferbench::store
