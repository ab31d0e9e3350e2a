#include "runner/wire/worker_protocol.hpp"

#include <fmt/format.h>

#include "core/plan/spec_json.hpp"

namespace inferbench::runner::worker_protocol {
namespace {

using nlohmann::json;

// `json[key]` as T, or a ProtocolError saying which message and field.
template <typename T>
T field(const json& message, std::string_view what, const char* key) {
    const auto it = message.find(key);
    if (it == message.end()) throw ProtocolError(fmt::format("worker {}: no field '{}'", what, key));
    try {
        return it->get<T>();
    } catch (const json::exception& e) {
        throw ProtocolError(fmt::format("worker {}: field '{}': {}", what, key, e.what()));
    }
}

DType read_dtype(std::string_view text) {
    if (const auto dtype = parse_dtype(text)) return *dtype;
    throw ProtocolError(fmt::format("worker event loaded: unknown input dtype '{}'", text));
}

json metrics_json(const std::vector<BackendMetric>& metrics) {
    json rows = json::array();
    for (const BackendMetric& m : metrics) rows.push_back({{"name", m.name}, {"value", m.value}, {"unit", m.unit}});
    return rows;
}

std::vector<BackendMetric> read_metrics(const json& j, std::string_view event) {
    std::vector<BackendMetric> metrics;
    const std::string what = fmt::format("event {}, metric", event);
    for (const json& metric : field<json>(j, event, "metrics"))
        metrics.push_back({field<std::string>(metric, what, "name"), field<double>(metric, what, "value"),
                           field<std::string>(metric, what, "unit")});
    return metrics;
}

json fields(const Loaded& e) {
    json inputs = json::array();
    for (const TensorInfo& input : e.inputs)
        inputs.push_back({{"name", input.name}, {"dtype", to_string(input.dtype)}, {"shape", input.shape}});
    return {{"load_ns", e.load_ns},
            {"backend_version", e.backend_version},
            {"inputs", std::move(inputs)},
            {"metrics", metrics_json(e.metrics)}};
}

json fields(const WarmupDone& e) { return {{"iterations", e.iterations}, {"elapsed_ns", e.elapsed_ns}}; }

json fields(const Measured& e) {
    json series = json::array();
    for (const store::Series& one : e.series) series.push_back({{"name", one.name}, {"values", one.values}});
    return {{"iterations", e.iterations},
            {"wall_ns", e.wall_ns},
            {"stopped", e.stopped},
            {"convergence", to_string(e.convergence)},
            {"stop_reason", e.stop_reason},
            {"metrics", metrics_json(e.metrics)},
            {"series", std::move(series)}};
}

json fields(const Layers& e) {
    json rows = json::array();
    for (const LayerTime& layer : e.layers)
        rows.push_back({{"node", layer.node},
                        {"op_type", layer.op_type},
                        {"provider", layer.provider},
                        {"calls", layer.calls},
                        {"total_ns", layer.total_ns},
                        {"host_dispatch", layer.host_dispatch}});
    return {{"layers", std::move(rows)}, {"metrics", metrics_json(e.metrics)}};
}

// Each generation as its iteration and two arrays (the steps' ends and KV-cache bytes): compact for the
// thousands of steps a cell has.
json fields(const Generated& e) {
    json generations = json::array();
    for (const GenerationRecord& g : e.generations) {
        std::vector<std::int64_t> ends, kv;
        for (const GenerationStep& step : g.steps) {
            ends.push_back(step.end_ns);
            kv.push_back(step.kv_cache_bytes);
        }
        generations.push_back({{"iteration", g.iteration}, {"end_ns", std::move(ends)}, {"kv_cache_bytes", std::move(kv)}});
    }
    return {{"generations", std::move(generations)}, {"first_tokens", e.first_tokens}};
}

Generated read_generated(const json& j) {
    constexpr std::string_view what = "event generated, generation";
    Generated e;
    for (const json& g : field<json>(j, "event generated", "generations")) {
        const auto ends = field<std::vector<std::int64_t>>(g, what, "end_ns");
        const auto kv = field<std::vector<std::int64_t>>(g, what, "kv_cache_bytes");
        if (ends.size() != kv.size())
            throw ProtocolError(fmt::format("worker {}: {} step ends but {} KV-cache sizes", what, ends.size(), kv.size()));
        GenerationRecord record{field<std::int64_t>(g, what, "iteration"), {}};
        for (std::size_t i = 0; i < ends.size(); ++i) record.steps.push_back({ends[i], kv[i]});
        e.generations.push_back(std::move(record));
    }
    e.first_tokens = field<std::vector<std::int32_t>>(j, "event generated", "first_tokens");
    return e;
}

// The stages as one array per column: compact for the thousands of batches a cell has.
json fields(const PipelineStages& e) {
    std::vector<std::int64_t> iteration, start, end, cpu, images;
    std::vector<std::string> stage, place;
    for (const PipelineStageTime& s : e.stages) {
        iteration.push_back(s.iteration);
        stage.emplace_back(to_string(s.stage));
        place.emplace_back(to_string(s.place));
        start.push_back(s.start_ns);
        end.push_back(s.end_ns);
        cpu.push_back(s.cpu_ns);
        images.push_back(s.images);
    }
    return {{"iteration", iteration}, {"stage", stage}, {"place", place}, {"start_ns", start},
            {"end_ns", end},          {"cpu_ns", cpu},   {"images", images}};
}

PipelineStages read_pipeline_stages(const json& j) {
    constexpr std::string_view what = "event pipeline_stages";
    const auto iteration = field<std::vector<std::int64_t>>(j, what, "iteration");
    const auto stage = field<std::vector<std::string>>(j, what, "stage");
    const auto place = field<std::vector<std::string>>(j, what, "place");
    const auto start = field<std::vector<std::int64_t>>(j, what, "start_ns");
    const auto end = field<std::vector<std::int64_t>>(j, what, "end_ns");
    const auto cpu = field<std::vector<std::int64_t>>(j, what, "cpu_ns");
    const auto images = field<std::vector<std::int64_t>>(j, what, "images");
    const std::size_t n = iteration.size();
    if (stage.size() != n || place.size() != n || start.size() != n || end.size() != n || cpu.size() != n ||
        images.size() != n)
        throw ProtocolError(fmt::format("worker {}: its columns differ in length", what));
    PipelineStages e;
    for (std::size_t i = 0; i < n; ++i) {
        const auto s = parse_pipeline_stage(stage[i]);
        const auto p = parse_stage_place(place[i]);
        if (!s || !p) throw ProtocolError(fmt::format("worker {}: unknown stage '{}' or place '{}'", what, stage[i], place[i]));
        e.stages.push_back({iteration[i], *s, *p, start[i], end[i], cpu[i], images[i]});
    }
    return e;
}

// A request with its chunks as two arrays (arrival times, token counts): compact for the thousands of chunks a
// cell has.
json served_request_json(const ServedRequest& r) {
    std::vector<std::int64_t> arrivals, tokens;
    for (const ServedChunk& chunk : r.chunks) {
        arrivals.push_back(chunk.arrival_ns);
        tokens.push_back(chunk.tokens);
    }
    return {{"index", r.index},
            {"warmup", r.warmup},
            {"scheduled_ns", r.scheduled_ns},
            {"sent_ns", r.sent_ns},
            {"end_ns", r.end_ns},
            {"outcome", to_string(r.outcome)},
            {"http_status", r.http_status},
            {"error", r.error},
            {"input_tokens", r.input_tokens},
            {"output_tokens", r.output_tokens},
            {"cached_tokens", r.cached_tokens},
            {"finish_reason", r.finish_reason},
            {"server_prompt_ms", r.server_prompt_ms},
            {"server_generation_ms", r.server_generation_ms},
            {"chunk_arrival_ns", std::move(arrivals)},
            {"chunk_tokens", std::move(tokens)}};
}

ServedRequest read_served_request(const json& j) {
    constexpr std::string_view what = "event served, request";
    ServedRequest r;
    r.index = field<std::int64_t>(j, what, "index");
    r.warmup = field<bool>(j, what, "warmup");
    r.scheduled_ns = field<std::int64_t>(j, what, "scheduled_ns");
    r.sent_ns = field<std::int64_t>(j, what, "sent_ns");
    r.end_ns = field<std::int64_t>(j, what, "end_ns");
    const auto outcome = parse_request_outcome(field<std::string>(j, what, "outcome"));
    if (!outcome) throw ProtocolError(fmt::format("worker {}: unknown outcome", what));
    r.outcome = *outcome;
    r.http_status = field<std::int64_t>(j, what, "http_status");
    r.error = field<std::string>(j, what, "error");
    r.input_tokens = field<std::int64_t>(j, what, "input_tokens");
    r.output_tokens = field<std::int64_t>(j, what, "output_tokens");
    r.cached_tokens = field<std::int64_t>(j, what, "cached_tokens");
    r.finish_reason = field<std::string>(j, what, "finish_reason");
    r.server_prompt_ms = field<double>(j, what, "server_prompt_ms");
    r.server_generation_ms = field<double>(j, what, "server_generation_ms");
    const auto arrivals = field<std::vector<std::int64_t>>(j, what, "chunk_arrival_ns");
    const auto tokens = field<std::vector<std::int64_t>>(j, what, "chunk_tokens");
    if (arrivals.size() != tokens.size())
        throw ProtocolError(fmt::format("worker {}: {} chunk times but {} token counts", what, arrivals.size(), tokens.size()));
    for (std::size_t i = 0; i < arrivals.size(); ++i) r.chunks.push_back({arrivals[i], tokens[i]});
    return r;
}

json fields(const Served& e) {
    json requests = json::array();
    for (const ServedRequest& r : e.requests) requests.push_back(served_request_json(r));
    json message = {{"requests", std::move(requests)}};
    if (e.facts)
        message["facts"] = {{"endpoint", e.facts->endpoint},
                            {"server_command", e.facts->server_command},
                            {"server_version", e.facts->server_version},
                            {"model_name", e.facts->model_name},
                            {"workload_json", e.facts->workload_json},
                            {"workload_fingerprint", e.facts->workload_fingerprint}};
    return message;
}

Served read_served(const json& j) {
    constexpr std::string_view what = "event served";
    Served e;
    for (const json& r : field<json>(j, what, "requests")) e.requests.push_back(read_served_request(r));
    if (const auto it = j.find("facts"); it != j.end()) {
        constexpr std::string_view facts = "event served, facts";
        e.facts = ServingFacts{field<std::string>(*it, facts, "endpoint"), field<std::string>(*it, facts, "server_command"),
                               field<std::string>(*it, facts, "server_version"), field<std::string>(*it, facts, "model_name"),
                               field<std::string>(*it, facts, "workload_json"),
                               field<std::string>(*it, facts, "workload_fingerprint")};
    }
    return e;
}

json fields(const Error& e) { return {{"phase", e.phase}, {"message", e.message}}; }

json fields(const Skipped& e) { return {{"reason", e.reason}}; }

Loaded read_loaded(const json& j) {
    constexpr std::string_view what = "event loaded";
    Loaded e;
    e.load_ns = field<std::int64_t>(j, what, "load_ns");
    e.backend_version = field<std::string>(j, what, "backend_version");
    for (const json& input : field<json>(j, what, "inputs")) {
        constexpr std::string_view input_what = "event loaded, input";
        e.inputs.push_back({field<std::string>(input, input_what, "name"),
                            read_dtype(field<std::string>(input, input_what, "dtype")),
                            field<std::vector<std::int64_t>>(input, input_what, "shape")});
    }
    e.metrics = read_metrics(j, "loaded");
    return e;
}

WarmupDone read_warmup_done(const json& j) {
    constexpr std::string_view what = "event warmup_done";
    return {field<std::int64_t>(j, what, "iterations"), field<std::int64_t>(j, what, "elapsed_ns")};
}

Measured read_measured(const json& j) {
    constexpr std::string_view what = "event measured";
    Measured e{field<std::int64_t>(j, what, "iterations"), field<std::int64_t>(j, what, "wall_ns"),
               field<bool>(j, what, "stopped")};
    const auto word = field<std::string>(j, what, "convergence");
    const auto convergence = parse_convergence(word);
    if (!convergence)
        throw ProtocolError(fmt::format("worker {}: field 'convergence': unknown value '{}'", what, word));
    e.convergence = *convergence;
    e.stop_reason = field<std::string>(j, what, "stop_reason");
    e.metrics = read_metrics(j, "measured");
    for (const json& one : field<json>(j, what, "series")) {
        constexpr std::string_view series_what = "event measured, series";
        e.series.push_back({field<std::string>(one, series_what, "name"),
                            field<std::vector<double>>(one, series_what, "values")});
    }
    return e;
}

Layers read_layers(const json& j) {
    Layers e;
    for (const json& row : field<json>(j, "event layers", "layers")) {
        constexpr std::string_view what = "event layers, layer";
        e.layers.push_back({field<std::string>(row, what, "node"), field<std::string>(row, what, "op_type"),
                            field<std::string>(row, what, "provider"), field<std::int64_t>(row, what, "calls"),
                            field<std::int64_t>(row, what, "total_ns"), field<bool>(row, what, "host_dispatch")});
    }
    e.metrics = read_metrics(j, "layers");
    return e;
}

Error read_error(const json& j) {
    constexpr std::string_view what = "event error";
    return {field<std::string>(j, what, "phase"), field<std::string>(j, what, "message")};
}

}  // namespace

std::string_view event_name(const Event& event) {
    return std::visit([](const auto& e) { return std::decay_t<decltype(e)>::kName; }, event);
}

json to_json(const Request& request) {
    return {{"spec", spec_to_json(request.spec)}, {"model_path", request.model_path}};
}

Request request_from_json(const json& message) {
    Request request;
    try {
        request.spec = spec_from_json(field<json>(message, "request", "spec"));
    } catch (const ProtocolError&) {
        throw;
    } catch (const std::exception& e) {
        throw ProtocolError(fmt::format("worker request: field 'spec': {}", e.what()));
    }
    request.model_path = field<std::string>(message, "request", "model_path");
    return request;
}

json to_json(const Event& event) {
    json message = std::visit([](const auto& e) { return fields(e); }, event);
    message["event"] = event_name(event);
    return message;
}

Event event_from_json(const json& message) {
    if (!message.is_object()) throw ProtocolError("worker event: not a JSON object");
    const auto name = field<std::string>(message, "event", "event");
    if (name == Loaded::kName) return read_loaded(message);
    if (name == WarmupDone::kName) return read_warmup_done(message);
    if (name == Measured::kName) return read_measured(message);
    if (name == Layers::kName) return read_layers(message);
    if (name == Generated::kName) return read_generated(message);
    if (name == Served::kName) return read_served(message);
    if (name == PipelineStages::kName) return read_pipeline_stages(message);
    if (name == Error::kName) return read_error(message);
    if (name == Skipped::kName) return Skipped{field<std::string>(message, "event skipped", "reason")};
    throw ProtocolError(fmt::format("worker event: unknown event '{}'", name));
}

}  // namespace inferbench::runner::worker_protocol
