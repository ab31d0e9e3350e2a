// A serving cell (the openai backend's): the worker starts the cell's server where it has a server_command,
// checks that the endpoint speaks the OpenAI API, plans the workload, sends the warm-up requests, then the
// measured traffic of the cell's scenario (serving/traffic_loop) through the HTTP client (serving/
// http_stream_client). Each request that ended ok is one iteration record (from its scheduled arrival to its
// last byte; the wait before its send as queue time), and every request, warm-up and failed ones included,
// goes to the orchestrator with its chunks in Served events. With find_peak (server scenario), the rate is
// searched first (runner/load/find_peak, each step judged by MLPerf's LLM Server verdict on TTFT and TPOT) and
// the cell's requests are those of the run at the peak.
#pragma once

#include <functional>
#include <string>

#include "core/spec.hpp"
#include "runner/wire/trace_buffer.hpp"
#include "runner/wire/worker_protocol.hpp"

namespace inferbench::runner {

using EventSender = std::function<void(const worker_protocol::Event&)>;

// Sends Loaded, WarmupDone, Served..., Measured; throws UserError / EnvironmentError for what stops the cell
// (one line: the server would not start, the endpoint is not there or speaks another API, a bad workload).
void run_serving_cell(const BenchmarkSpec& spec, const std::string& model_path, TraceBuffer& trace, std::string& phase,
                      const EventSender& send);

}  // namespace inferbench::runner
