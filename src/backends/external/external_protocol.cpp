#include "backends/external/external_protocol.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "core/metrics/host_stage_metrics.hpp"
#include "core/plan/model_spec.hpp"
#include "core/units.hpp"

namespace inferbench::external {
namespace {

using nlohmann::json;

constexpr std::string_view kStepPrefix = "step ";

bool contains(const std::vector<std::string>& list, std::string_view item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

// Times are whole nanoseconds: a float usually means milliseconds or seconds slipped through.
std::int64_t ns_value(const json& value, std::string_view key) {
    const bool too_large =
        value.is_number_unsigned() &&
        value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (!value.is_number_integer() || too_large || value.get<std::int64_t>() < 0)
        throw ProtocolError(fmt::format("{} must be a whole number of nanoseconds >= 0, not {}", key, value.dump()));
    return value.get<std::int64_t>();
}

std::int64_t required_ns(const json& line, std::string_view key) {
    const auto it = line.find(key);
    if (it == line.end()) throw ProtocolError(fmt::format("the line lacks {}", key));
    return ns_value(*it, key);
}

// Device times a runner could not measure are absent or null.
std::int64_t optional_ns(const json& line, std::string_view key) {
    const auto it = line.find(key);
    return it == line.end() || it->is_null() ? kNotMeasured : ns_value(*it, key);
}

std::string required_string(const json& line, std::string_view key) {
    const auto it = line.find(key);
    if (it == line.end() || !it->is_string()) throw ProtocolError(fmt::format("the line lacks the text field {}", key));
    return it->get<std::string>();
}

template <typename T>
void read_optional(const json& line, const char* key, T& out) {
    if (const auto it = line.find(key); it != line.end()) out = it->get<T>();
}

RunnerHeader parse_header(const json& line) {
    RunnerHeader header;
    header.framework = required_string(line, "framework");
    header.version = required_string(line, "version");
    try {
        read_optional(line, "device", header.device);
        read_optional(line, "device_name", header.device_name);
        read_optional(line, "devices", header.devices);
        read_optional(line, "precisions", header.precisions);
        read_optional(line, "notes", header.notes);
        read_optional(line, "precision_formats", header.precision_formats);
        read_optional(line, "unavailable", header.unavailable);
        read_optional(line, "zoo_models", header.zoo_models);
        read_optional(line, "missing_libraries", header.missing_libraries);
        if (const auto it = line.find("metrics"); it != line.end())
            for (const json& metric : *it)
                header.metrics.push_back({metric.at("name").get<std::string>(), metric.at("value").get<double>(),
                                          metric.at("unit").get<std::string>()});
        if (const auto it = line.find("inputs"); it != line.end()) {
            header.inputs = RunnerHeader::InputsFed{it->at("samples").get<std::int64_t>(), it->at("cycled").get<bool>()};
            if (header.inputs->samples < 1)
                throw ProtocolError(fmt::format("inputs.samples must be 1 or more, not {}", header.inputs->samples));
        }
    } catch (const json::exception& e) {
        throw ProtocolError(fmt::format("a header field has the wrong type: {}", e.what()));
    }
    return header;
}

IterationRecord parse_iteration(const json& line) {
    IterationRecord record;
    record.start_ns = required_ns(line, "start_ns");
    record.e2e_ns = required_ns(line, "e2e_ns");
    record.enqueue_ns = optional_ns(line, "enqueue_ns");
    record.h2d_ns = optional_ns(line, "h2d_ns");
    record.compute_ns = optional_ns(line, "compute_ns");
    record.d2h_ns = optional_ns(line, "d2h_ns");
    return record;
}

RunnerLine parse_json_line(const json& line) {
    if (!line.is_object()) throw ProtocolError("a line starting with '{' must be a JSON object");
    const std::string type = required_string(line, "type");
    RunnerLine parsed;
    if (type == "iteration") {
        parsed.kind = RunnerLine::Kind::iteration;
        parsed.record = parse_iteration(line);
        parsed.pre_ns = optional_ns(line, "pre_ns");
        parsed.post_ns = optional_ns(line, "post_ns");
        const std::int64_t stages =
            std::max<std::int64_t>(parsed.pre_ns, 0) + std::max<std::int64_t>(parsed.post_ns, 0);
        if (stages > parsed.record.e2e_ns)
            throw ProtocolError(
                fmt::format("pre_ns + post_ns ({} ns) exceed e2e_ns ({} ns): the stages are parts of "
                            "the iteration",
                            stages, parsed.record.e2e_ns));
    } else if (type == "header") {
        parsed.kind = RunnerLine::Kind::header;
        parsed.header = parse_header(line);
    } else if (type == "done") {
        parsed.kind = RunnerLine::Kind::done;
        parsed.done_iterations = required_ns(line, "iterations");
        parsed.done_warmup_iterations = optional_ns(line, "warmup_iterations");
        parsed.done_warmup_ns = optional_ns(line, "warmup_ns");
    } else if (type == "prepared") {
        parsed.kind = RunnerLine::Kind::prepared;
    } else if (type == "generated") {
        parsed.kind = RunnerLine::Kind::generated;
        parsed.generated_steps = required_ns(line, "steps");
        parsed.generated_start_ns = optional_ns(line, "start_ns");
    } else if (type == "error") {
        parsed.kind = RunnerLine::Kind::error;
        parsed.text = required_string(line, "message");
    } else {
        throw ProtocolError(fmt::format(
            "unknown line type '{}' (header, iteration, done, error, prepared, generated)", type));
    }
    return parsed;
}

// "step END_NS TOKEN TOKEN ...": plain words, not JSON, so that a batch of 32 costs the runner no encoder.
RunnerLine parse_step_line(std::string_view line) {
    RunnerLine parsed;
    parsed.kind = RunnerLine::Kind::step;
    std::istringstream words{std::string(line.substr(kStepPrefix.size()))};
    if (!(words >> parsed.step_end_ns) || parsed.step_end_ns < 0)
        throw ProtocolError("a step line starts with its end time in whole nanoseconds: step END_NS TOKEN...");
    for (std::int64_t token = 0; words >> token;) {
        if (token < 0 || token > std::numeric_limits<std::int32_t>::max())
            throw ProtocolError(fmt::format("a step line's token {} is not a token id", token));
        parsed.step_tokens.push_back(static_cast<std::int32_t>(token));
    }
    if (!words.eof()) throw ProtocolError("a step line holds something other than whole numbers");
    if (parsed.step_tokens.empty()) throw ProtocolError("a step line without tokens");
    return parsed;
}

}  // namespace

std::string RunnerHeader::refusal(const Device& target, Precision precision, std::string_view format) const {
    if (!unavailable.empty()) return unavailable;
    const std::string kind = target.kind == DeviceKind::cpu ? "cpu" : "cuda";
    if (!contains(devices, kind)) return fmt::format("{} {} has no {} device here", framework, version, kind);
    const std::string name(to_string(precision));
    const auto listed = precisions.find(kind);
    if (listed == precisions.end() || !contains(listed->second, name)) {
        const auto note = notes.find(kind + "/" + name);
        return note != notes.end() ? note->second
                                   : fmt::format("{} {} runs no {} on {}", framework, version, name, kind);
    }
    const auto formats = precision_formats.find(name);
    if (formats != precision_formats.end() && !contains(formats->second, format))
        return fmt::format("{} with {} needs a model file in one of: {}", name, framework, join(formats->second, ", "));
    return {};
}

std::string RunnerHeader::model_refusal(const std::string& model) const {
    if (is_model_spec(model)) {
        const std::string library = model.substr(0, model.find(':'));
        const auto missing = missing_libraries.find(library);
        return missing == missing_libraries.end() ? std::string() : fmt::format("{}: {}", model, missing->second);
    }
    // A zoo name: no folder and no extension (files are given by path). No model (the cell `list backends`
    // asks about) is no name to refuse.
    const bool zoo_name =
        !model.empty() && model.find('/') == std::string::npos && std::filesystem::path(model).extension().empty();
    if (!zoo_name || zoo_models.empty() || contains(zoo_models, model)) return {};
    return fmt::format("this runner builds the zoo models {}; not {}", join(zoo_models, ", "), model);
}

RunnerLine parse_runner_line(std::string_view line) {
    if (line.starts_with(kStepPrefix)) return parse_step_line(line);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] != '{') {
        RunnerLine text;
        text.text = std::string(line);
        return text;
    }
    const json parsed = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) throw ProtocolError("a line starting with '{' is not valid JSON");
    return parse_json_line(parsed);
}

json make_request(const std::string& model, const BenchmarkSpec& spec) {
    json options = json::object();
    for (const auto& [key, value] : spec.backend_options) options[key] = value;
    // As the harness's own loop (within_capacity): at least one iteration, and never more than the cap.
    const LoopSettings& loop = spec.loop;
    std::int64_t min_iterations = std::max<std::int64_t>(loop.min_iterations, 1);
    if (loop.max_iterations > 0) min_iterations = std::min(min_iterations, loop.max_iterations);
    json request{{"protocol_version", kProtocolVersion},
                 {"model", model},
                 {"batch_size", spec.batch_size},
                 {"precision", to_string(spec.precision)},
                 {"device", to_string(spec.device)},
                 {"warmup_ns", loop.warmup_ns},
                 {"warmup_iterations", loop.warmup_iterations},
                 {"duration_ns", loop.duration_ns},
                 {"min_iterations", min_iterations},
                 {"max_iterations", loop.max_iterations},
                 {"seed", spec.seed},
                 {"options", options}};
    if (!spec.inputs.empty()) request["inputs"] = spec.inputs;
    if (spec.generation.active())
        request["generation"] = {{"input_tokens", spec.generation.input_tokens},
                                 {"output_tokens", spec.generation.output_tokens},
                                 {"sampling", to_string(spec.generation.sampling)}};
    return request;
}

json make_prepare_command(const GenerationRequest& request) {
    json prompts = json::array();
    for (std::int64_t row = 0; row < request.batch; ++row) {
        const auto begin = request.prompts.begin() + row * request.input_tokens;
        prompts.push_back(std::vector<std::int32_t>(begin, begin + request.input_tokens));
    }
    return {{"type", "prepare"},
            {"batch", request.batch},
            {"input_tokens", request.input_tokens},
            {"output_tokens", request.output_tokens},
            {"sampling", to_string(request.sampling)},
            {"seed", request.seed},
            {"prompts", std::move(prompts)}};
}

json make_generate_command() { return {{"type", "generate"}}; }

void HostStageTotals::add(const RunnerLine& iteration) {
    const bool pre = iteration.pre_ns != kNotMeasured;
    const bool post = iteration.post_ns != kNotMeasured;
    if (!pre && !post) return;
    ++iterations_;
    e2e_sum_ns_ += static_cast<double>(iteration.record.e2e_ns);
    if (pre) ++pre_count_, pre_sum_ns_ += static_cast<double>(iteration.pre_ns);
    if (post) ++post_count_, post_sum_ns_ += static_cast<double>(iteration.post_ns);
}

std::vector<BackendMetric> HostStageTotals::metrics() const {
    if (iterations_ == 0) return {};
    namespace sm = host_stage_metrics;
    const auto n = static_cast<double>(iterations_);
    std::vector<BackendMetric> out{{std::string(sm::kIterations), n, "count"},
                                   {std::string(sm::kE2eMeanNs), e2e_sum_ns_ / n, "ns"}};
    if (pre_count_ == iterations_) out.push_back({std::string(sm::kPreMeanNs), pre_sum_ns_ / n, "ns"});
    if (post_count_ == iterations_) out.push_back({std::string(sm::kPostMeanNs), post_sum_ns_ / n, "ns"});
    return out;
}

}  // namespace inferbench::external
