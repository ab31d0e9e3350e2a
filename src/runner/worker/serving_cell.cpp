#include "runner/worker/serving_cell.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "backends/openai/openai_backend.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/metrics/server_metrics.hpp"
#include "core/plan/model_spec.hpp"
#include "core/serving_figures.hpp"
#include "core/statistics/early_stopping.hpp"
#include "core/temp_dir.hpp"
#include "core/text_checks.hpp"
#include "models/decoder_models.hpp"
#include "models/gguf_writer.hpp"
#include "runner/load/find_peak.hpp"
#include "serving/endpoint_probe.hpp"
#include "serving/http_stream_client.hpp"
#include "serving/server_process.hpp"
#include "serving/traffic_loop.hpp"
#include "serving/workload.hpp"
#include "serving/workload_json.hpp"

namespace inferbench::runner {
namespace {

namespace wp = worker_protocol;
using serving::PromptForm;

// Requests go to the orchestrator in batches of about this many chunks (the worker's memory stays bounded).
constexpr std::size_t kChunksPerEvent = 16384;
// A closed-loop or duration-bound workload is planned before the run: this many prompt tokens at most, and
// between these counts of requests (the loop stops when they are used up, and says so).
constexpr std::int64_t kPlannedPromptTokens = 4'000'000;
constexpr std::int64_t kMinPlannedRequests = 1000;
constexpr std::int64_t kMaxPlannedRequests = 20000;

// The model's vocabulary where inferbench can read it: a zoo decoder's shape, a GGUF's header.
std::int64_t model_vocabulary(const BenchmarkSpec& spec, const std::string& model_path) {
    if (const models::DecoderModel* decoder = models::find_decoder_model(spec.model)) return decoder->shape.vocab;
    const std::string& file = model_path.empty() ? spec.model : model_path;
    if (file.ends_with(".gguf")) return models::read_gguf_decoder_shape(file).vocab;
    return 0;
}

std::int64_t planned_requests(const BenchmarkSpec& spec, const ServingOptions& options) {
    if (options.requests > 0) return options.requests;
    std::int64_t planned = 0;
    if (spec.scenario.scenario == Scenario::server && !spec.scenario.find_peak) {
        const double expected = spec.scenario.target_qps * static_cast<double>(spec.loop.duration_ns) * 1e-9;
        planned = static_cast<std::int64_t>(std::min(expected * 1.5 + 16, static_cast<double>(serving::kMaxWorkloadRequests)));
    } else {
        const std::int64_t by_tokens = kPlannedPromptTokens / std::max<std::int64_t>(1, spec.generation.input_tokens);
        planned = std::clamp(by_tokens, kMinPlannedRequests, kMaxPlannedRequests);
        // find_peak's steps each send the requests early stopping needs, none sent twice.
        if (spec.scenario.find_peak)
            planned = std::max(planned, (kMaxPeakSteps + 2) * (early_stopping::min_passing_queries(1, 0.99) + 1));
    }
    // The plan's max_iterations bounds the measured requests as it bounds any cell's queries.
    return spec.loop.max_iterations > 0 ? std::min(planned, spec.loop.max_iterations) : planned;
}

serving::WorkloadSettings workload_settings(const BenchmarkSpec& spec, const ServingOptions& options,
                                            const std::string& model_path, std::int64_t requests) {
    serving::WorkloadSettings w;
    w.source = options.workload;
    w.api = options.api;
    w.input_tokens = spec.generation.input_tokens;
    w.output_tokens = spec.generation.output_tokens;
    w.distribution = *serving::parse_length_distribution(options.length_distribution);
    w.spread = options.length_spread;
    w.prefix_groups = options.prefix_groups;
    w.prefix_tokens = options.prefix_tokens;
    w.turns = options.turns;
    w.seed = spec.seed;
    w.requests = w.source == serving::kSyntheticSource ? requests : 0;
    w.vocab = options.vocab > 0 ? options.vocab : model_vocabulary(spec, model_path);
    if (options.prompt_form == "token_ids" && w.vocab == 0)
        throw UserError("prompt_form token_ids needs the model's vocabulary: set backend_options.openai.vocab=N (the "
                        "server's vocabulary size), or use prompt_form: text");
    const bool ids = options.api == ServingApi::completions &&
                     (options.prompt_form == "token_ids" || (options.prompt_form == "auto" && w.vocab > 0));
    w.prompt_form = ids ? PromptForm::token_ids : PromptForm::text;
    return w;
}

// The cell's server: started from server_command where there is one, on a free port unless the plan names
// the endpoint; nothing where the server already runs.
struct CellServer {
    std::unique_ptr<TempDir> log_dir;  // before the process: removed after it stopped
    std::unique_ptr<serving::ServerProcess> process;
    std::string endpoint;
    std::string command;
};

CellServer start_server(const BenchmarkSpec& spec, const ServingOptions& options, const std::string& model_path) {
    CellServer server;
    server.endpoint = options.endpoint;
    if (options.server_command.empty()) return server;
    const int port = serving::free_local_port();
    std::map<std::string, std::string> values;
    for (const auto& [name, value] : spec.backend_options) values[name] = value;
    values["model"] = model_path;
    values["port"] = std::to_string(port);
    values["host"] = "127.0.0.1";
    values["precision"] = std::string(to_string(spec.precision));
    server.command = serving::fill_command(options.server_command, values);
    if (server.endpoint.empty()) server.endpoint = fmt::format("http://127.0.0.1:{}", port);
    server.log_dir = std::make_unique<TempDir>("server");
    server.process = std::make_unique<serving::ServerProcess>(server.command, server.log_dir->path() / "server.log");
    std::string base = server.endpoint;
    while (base.ends_with('/')) base.pop_back();
    if (base.ends_with("/v1")) base.resize(base.size() - 3);
    server.process->wait_ready(base + options.health_path, options.server_ready_timeout_ns);
    return server;
}

std::string api_key(const ServingOptions& options) {
    if (options.api_key_env.empty()) return {};
    const char* key = std::getenv(options.api_key_env.c_str());
    if (key == nullptr || *key == '\0')
        throw UserError(fmt::format("api_key_env names {}, which is not set; export it with the server's API key",
                                    options.api_key_env));
    return key;
}

// One line of text the wire (JSON) can carry: a server's message may hold any bytes.
std::string wire_text(const std::string& text) { return escape_invalid_utf8(text); }

// Where ended requests go: ok measured ones into the trace as iteration records, all of them to the
// orchestrator in Served events, the last with the cell's facts (made after the traffic, so that building the
// workload's JSON never weighs on the measured phase).
class ServedOutput {
public:
    ServedOutput(TraceBuffer& trace, const EventSender& send) : trace_(trace), send_(send) {}

    void take(std::vector<ServedRequest> requests) {
        for (ServedRequest& request : requests) {
            request.error = wire_text(request.error);
            request.finish_reason = wire_text(request.finish_reason);
            if (!request.warmup && request.outcome == RequestOutcome::ok) record(request);
            sent_through_ = std::max(sent_through_, request.index + 1);
            chunks_ += request.chunks.size() + 1;
            batch_.push_back(std::move(request));
        }
        if (chunks_ >= kChunksPerEvent) flush({});
    }
    void flush(std::optional<ServingFacts> facts) {
        if (batch_.empty() && !facts) return;
        send_(wp::Served{std::move(facts), std::exchange(batch_, {})});
        chunks_ = 0;
    }
    // Requests 0 .. sent_through() - 1 of the workload include every one sent.
    std::int64_t sent_through() const { return sent_through_; }
    std::int64_t recorded() const { return recorded_; }
    std::int64_t first_start_ns() const { return first_start_ns_; }
    std::int64_t last_end_ns() const { return last_end_ns_; }

private:
    void record(const ServedRequest& request) {
        IterationRecord r;
        r.start_ns = request.scheduled_ns;
        r.e2e_ns = request.end_ns - request.scheduled_ns;
        r.queue_ns = request.sent_ns - request.scheduled_ns;
        auto& header = trace_.header();
        const std::int64_t i = header.published.load(std::memory_order_relaxed);
        if (trace_.is_ring()) {
            while (i - header.consumed.load(std::memory_order_acquire) >= trace_.capacity())
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            trace_.records()[i % trace_.capacity()] = r;
        } else {
            if (i >= trace_.capacity()) return;  // the plan's max_iterations: the Served events still carry it
            trace_.records()[i] = r;
        }
        header.published.store(i + 1, std::memory_order_release);
        first_start_ns_ = recorded_ == 0 ? r.start_ns : std::min(first_start_ns_, r.start_ns);
        last_end_ns_ = std::max(last_end_ns_, r.start_ns + r.e2e_ns);
        ++recorded_;
    }

    TraceBuffer& trace_;
    const EventSender& send_;
    std::vector<ServedRequest> batch_;
    std::size_t chunks_ = 0;
    std::int64_t sent_through_ = 0;
    std::int64_t recorded_ = 0;
    std::int64_t first_start_ns_ = 0;
    std::int64_t last_end_ns_ = 0;
};

serving::TrafficSettings measured_traffic(const BenchmarkSpec& spec, const ServingOptions& options, double rate) {
    serving::TrafficSettings t;
    t.scenario = spec.scenario.scenario;
    t.concurrency = spec.scenario.concurrency;
    t.rate = rate;
    t.burstiness = options.burstiness;
    t.max_requests = options.requests;
    t.duration_ns = spec.loop.duration_ns;
    t.seed = spec.seed;
    return t;
}

// find_peak: the highest rate whose run MLPerf's LLM Server verdict calls VALID, each step on requests of its
// own (never one sent before); the steps as series. Returns the rate the cell then runs at.
double search_serving_peak(const BenchmarkSpec& spec, const ServingOptions& options, serving::RequestPort& port,
                           serving::TrafficClock& clock, std::span<const PlannedRequest>& rest,
                           const serving::TrafficHooks& stop_only, std::vector<store::Series>& series) {
    if (!options.slos.ttft_ns && !options.slos.tpot_ns)
        throw UserError("find_peak on the openai backend needs ttft_bound or tpot_bound (MLPerf's LLM server "
                        "constraints), e.g. backend_options.openai.ttft_bound=2s");
    std::vector<double> rates, passed, p99_ttft_ms;
    // A step is VALID only where LoadGen's early stopping is satisfied: it sends at least the requests that needs
    // with one over the bound, for as long as that takes at its rate (the plan's duration at least).
    const std::int64_t needed = early_stopping::min_passing_queries(1, 0.99) + 1;
    const auto run_step = [&](double qps) {
        serving::TrafficSettings t = measured_traffic(spec, options, qps);
        t.max_requests = 0;
        const auto expected = static_cast<std::int64_t>(qps * static_cast<double>(t.duration_ns) * 1e-9);
        const std::int64_t count = std::max(expected, needed);
        t.duration_ns = std::max(t.duration_ns, static_cast<std::int64_t>(static_cast<double>(count) / qps * 1e9));
        const std::size_t take = static_cast<std::size_t>(std::min<std::int64_t>(count, static_cast<std::int64_t>(rest.size())));
        if (take == 0) throw UserError("find_peak used up the planned requests; set backend_options.openai.requests higher");
        const serving::TrafficResult step = serving::run_traffic(port, clock, rest.first(take), t, stop_only);
        rest = rest.subspan(take);
        const auto verdict = judge_llm_server(step.requests, options.slos);
        PeakStep result{qps, static_cast<std::int64_t>(step.requests.size()), 0, verdict && verdict->valid};
        if (verdict && verdict->ttft) result.p99_ns = verdict->ttft->percentile_ns;
        rates.push_back(qps);
        passed.push_back(result.passed ? 1 : 0);
        p99_ttft_ms.push_back(static_cast<double>(result.p99_ns) * 1e-6);
        return result;
    };
    const PeakSearch search = search_peak(spec.scenario.target_qps, run_step);
    series.push_back({"find_peak_qps", rates});
    series.push_back({"find_peak_passed", passed});
    series.push_back({"find_peak_p99_ttft_ms", p99_ttft_ms});
    if (search.peak_qps <= 0)
        throw UserError(fmt::format("find_peak: no rate down to {:.3g} requests/s met the bounds", rates.empty() ? 0.0 : rates.back()));
    return search.peak_qps;
}

}  // namespace

void run_serving_cell(const BenchmarkSpec& spec, const std::string& model_path, TraceBuffer& trace, std::string& phase,
                      const EventSender& send) {
    phase = "options";
    const ServingOptions options = read_serving_options(spec);
    phase = "server start";
    const std::int64_t start_begin = monotonic_ns();
    CellServer server = start_server(spec, options, model_path);
    const std::int64_t start_ns = monotonic_ns() - start_begin;

    phase = "endpoint";
    serving::EndpointConfig config;
    config.base_url = server.endpoint;
    config.api = options.api;
    config.model = options.model_name;
    config.api_key = api_key(options);
    config.request_timeout_ns = options.request_timeout_ns;
    config.ignore_eos = options.ignore_eos;
    config.continuous_usage_stats = options.continuous_usage;
    config.sampling = spec.generation.sampling;
    config.seed = spec.seed;
    const serving::EndpointProbe probe = serving::probe_endpoint(config);
    if (!probe.reachable) throw UserError(probe.error);
    if (config.model.empty()) {
        if (probe.models.empty())
            throw UserError(fmt::format("{} lists no model; name the one to ask with served:NAME or "
                                        "backend_options.openai.model_name",
                                        serving::endpoint_url(config, "/v1/models")));
        config.model = probe.models.front();
    }
    std::string version = serving::server_version(server.endpoint, config.api_key);
    if (version.empty()) version = probe.server;

    phase = "workload";
    // The warm-up takes the workload's first requests (whole sessions), the measured traffic the rest.
    const std::int64_t turns = std::max<std::int64_t>(1, options.workload == serving::kSyntheticSource ? options.turns : 1);
    const std::vector<PlannedRequest> workload = serving::make_workload(
        workload_settings(spec, options, model_path, options.warmup_requests * turns + planned_requests(spec, options)));
    const std::size_t warmup_count =
        static_cast<std::size_t>(std::min<std::int64_t>(options.warmup_requests * turns, static_cast<std::int64_t>(workload.size()) - 1));
    std::vector<BackendMetric> metrics;
    if (server.process) metrics.push_back({std::string(server_metrics::kStartSeconds), static_cast<double>(start_ns) * 1e-9, "s"});
    const std::int64_t gpus = options.gpus > 0 ? options.gpus : spec.device.kind == DeviceKind::cuda ? 1 : 0;
    if (gpus > 0) metrics.push_back({std::string(server_metrics::kGpus), static_cast<double>(gpus), "count"});
    send(wp::Loaded{start_ns, wire_text(version.empty() ? "unknown" : version), {}, std::move(metrics)});

    serving::StreamClient client(config, static_cast<std::size_t>(std::max<std::int64_t>(spec.scenario.concurrency, 64)));
    serving::SteadyTrafficClock clock;
    const auto& stop = trace.header().stop_requested;
    const serving::TrafficHooks stop_only{[&stop] { return stop.load(std::memory_order_relaxed) != 0; }, {}};

    ServedOutput output(trace, send);
    serving::TrafficHooks hooks = stop_only;
    hooks.on_finished = [&output](std::vector<ServedRequest> requests) { output.take(std::move(requests)); };

    phase = "warm-up";
    const std::int64_t warm_begin = monotonic_ns();
    std::span<const PlannedRequest> rest(workload);
    if (warmup_count > 0) {
        serving::TrafficSettings warm;
        warm.scenario = Scenario::concurrency;
        warm.concurrency = std::clamp<std::int64_t>(spec.scenario.concurrency, 1, static_cast<std::int64_t>(warmup_count));
        warm.warmup_requests = static_cast<std::int64_t>(warmup_count);
        warm.duration_ns = 0;
        serving::run_traffic(client, clock, rest.first(warmup_count), warm, hooks);
        rest = rest.subspan(warmup_count);
    }
    send(wp::WarmupDone{static_cast<std::int64_t>(warmup_count), monotonic_ns() - warm_begin});

    phase = "measure";
    std::vector<store::Series> series;
    double rate = spec.scenario.target_qps;
    if (spec.scenario.scenario == Scenario::server && spec.scenario.find_peak)
        rate = search_serving_peak(spec, options, client, clock, rest, stop_only, series);
    const serving::TrafficResult result =
        serving::run_traffic(client, clock, rest, measured_traffic(spec, options, rate), hooks);
    // The workload sent (every request up to the last one sent), stored so that workload=FILE sends it again.
    const std::span<const PlannedRequest> sent(workload.data(), static_cast<std::size_t>(output.sent_through()));
    output.flush(ServingFacts{wire_text(server.endpoint), wire_text(server.command), wire_text(version),
                              wire_text(config.model), serving::workload_json(sent).dump(),
                              serving::workload_fingerprint(sent)});
    std::vector<BackendMetric> figures = {
        {std::string(server_metrics::kRequestsSent), static_cast<double>(result.sent), "requests"},
        {std::string(server_metrics::kRequestsCancelled), static_cast<double>(result.cancelled), "requests"}};
    if (spec.scenario.find_peak) figures.push_back({std::string(server_metrics::kPeakQps), rate, "requests/s"});
    const std::int64_t wall_ns = output.recorded() > 0 ? output.last_end_ns() - output.first_start_ns() : 0;
    const bool stopped = result.stop == serving::TrafficStop::interrupted;
    // Only a run that ran out of planned requests before its duration ended says why it stopped.
    std::string why;
    const bool plan_limit = spec.loop.max_iterations > 0 && planned_requests(spec, options) >= spec.loop.max_iterations;
    if (result.stop == serving::TrafficStop::workload_done && options.requests == 0 && !plan_limit)
        why = fmt::format("the workload's {} planned requests were all sent before the duration ended; set "
                          "backend_options.openai.requests for a longer run",
                          workload.size() - warmup_count);
    send(wp::Measured{output.recorded(), wall_ns, stopped, Convergence::fixed, why, std::move(figures),
                      std::move(series)});
    phase = "server stop";
    if (server.process) server.process->stop();
}

}  // namespace inferbench::runner
