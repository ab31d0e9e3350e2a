#include "backends/openai/openai_backend.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "backends/options.hpp"
#include "core/error.hpp"
#include "core/plan/model_spec.hpp"
#include "core/units.hpp"
#include "core/version.hpp"

namespace inferbench {
namespace {

constexpr std::string_view kName = "openai";

std::int64_t duration_option(const OptionReader& reader, std::string_view name, bool zero_allowed) {
    const std::string text = reader.text(name);
    if (zero_allowed && text == "0") return 0;
    std::string why;
    const auto ns = parse_duration_ns(text, &why);
    if (!ns || *ns < 0 || (!zero_allowed && *ns == 0))
        reader.reject(name, text, zero_allowed ? "a duration such as 2s or 200ms, or 0 for none" : "a duration such as 30s");
    return *ns;
}

double number_option(const OptionReader& reader, std::string_view name, double min, double max) {
    const std::string text = reader.text(name);
    const auto value = parse_double(text);
    if (!value || !std::isfinite(*value) || *value < min || *value > max)
        reader.reject(name, text, fmt::format("a number from {:g} to {:g}", min, max));
    return *value;
}

class OpenAIBackend final : public Backend {
public:
    std::string name() const override { return std::string(kName); }
    std::string version() const override { return std::string(kVersion); }
    Capabilities capabilities() const override {
        Capabilities caps;
        // The device is where the server runs (its GPU's telemetry); the precision a label the server command
        // may use ({precision}): the server decides both.
        caps.devices = {DeviceKind::cpu, DeviceKind::cuda};
        caps.precisions = {std::begin(kAllPrecisions), std::end(kAllPrecisions)};
        caps.needs_model_file = false;
        caps.dynamic_batch = false;
        caps.generates = true;
        caps.serves_endpoint = true;
        return caps;
    }
    std::vector<BackendOption> options() const override { return openai_options(); }
    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override {
        if (!spec.generation.active())
            return "the openai backend sends language-model requests: give served:NAME (a model a server serves), a "
                   "zoo decoder or a .gguf for its server_command";
        if (spec.batch_size != 1)
            return "the openai backend sends one request per query and the server batches them: use batch size 1, "
                   "and concurrency or target_qps for the load";
        if (spec.scenario.scenario == Scenario::multi_stream)
            return "the openai backend runs single_stream, concurrency, server or offline; multi_stream has no "
                   "meaning for a server's requests";
        if (spec.scenario.streams != 1 || spec.scenario.batcher)
            return "the openai backend's server batches requests itself: streams and the batcher do not apply (use "
                   "concurrency or target_qps)";
        const ServingOptions options = read_serving_options(spec);
        if (options.endpoint.empty() && options.server_command.empty())
            return "the openai backend needs a server: set endpoint=URL (e.g. http://127.0.0.1:8000), or "
                   "backend_options.openai.server_command to start one per cell";
        if (is_served_model(spec.model) && options.server_command.find("{model}") != std::string::npos)
            return fmt::format("server_command uses {{model}}, but '{}' names a model on a server, not a file: give "
                               "a zoo decoder or a .gguf as the model",
                               spec.model);
        if (!options.workload.empty() && options.workload != "synthetic" && options.turns > 1)
            return "turns apply to the synthetic workload; a workload file's conversations are sent as they are";
        return Backend::unsupported_reason(spec);
    }
    void load(const std::string& /*model_path*/, const BenchmarkSpec& /*spec*/) override { not_driven(); }
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor> /*inputs*/) override { not_driven(); }
    void infer(DeviceTimes& /*times*/) override { not_driven(); }

private:
    [[noreturn]] static void not_driven() {
        throw std::logic_error("the openai backend's cells are sent by the worker's serving path, never infer()");
    }
};

}  // namespace

std::unique_ptr<Backend> make_openai_backend() { return std::make_unique<OpenAIBackend>(); }

std::vector<BackendOption> openai_options() {
    return {
        {"endpoint", "", "the server's base URL, e.g. http://127.0.0.1:8000 (also the plan key endpoint)", OptionType::text},
        {"api", "completions", "completions (/v1/completions) or chat (/v1/chat/completions)", OptionType::choice},
        {"model_name", "", "the requests' \"model\" (default: served:NAME's NAME, else the server's first model)",
         OptionType::text},
        {"api_key_env", "", "the environment variable holding the API key, sent as a Bearer token (never stored)",
         OptionType::text},
        {"server_command", "",
         "a server started for each cell and stopped after it; {model} {port} {host} {precision} and {OPTION} "
         "(any option of this list, and the plan's own arg_NAME options, which a list sweeps: arg_parallel: [1, 4] "
         "with --parallel {arg_parallel}) are filled in",
         OptionType::text},
        {"health_path", "/health", "server_command: GET this path until it answers 200", OptionType::text},
        {"server_ready_timeout", "300s", "server_command: the longest wait for its health path", OptionType::text},
        {"request_timeout", "600s", "a request not complete after this counts as a timeout", OptionType::text},
        {"requests", "0", "measured requests at most (0: as many as the duration allows)", OptionType::count},
        {"warmup_requests", "2", "requests sent and awaited before measuring, never in the figures", OptionType::count},
        {"burstiness", "1", "server scenario: the gamma shape of the gaps between arrivals (1: Poisson; below 1 "
                             "burstier; vLLM's and AIPerf's burstiness)",
         OptionType::number},
        {"ttft_bound", "0", "SLO: time to first token at p99 (MLPerf's LLM server) and per request for goodput; 0: none",
         OptionType::text},
        {"tpot_bound", "0", "SLO: time per output token at p99 and per request for goodput; 0: none", OptionType::text},
        {"e2e_bound", "0", "SLO: a request's end-to-end latency for goodput; 0: none", OptionType::text},
        {"workload", "synthetic",
         "synthetic (lengths from input_tokens and output_tokens), a JSONL file of prompts (ShareGPT conversations "
         "too), or a workload JSON stored by an earlier run (replayed exactly)",
         OptionType::text},
        {"length_distribution", "fixed", "synthetic lengths: fixed, uniform (mean +- spread x mean), normal (stddev "
                                         "spread x mean)",
         OptionType::choice},
        {"length_spread", "0", "the relative spread of uniform and normal lengths (0 to 1)", OptionType::number},
        {"prefix_groups", "0", "synthetic: requests in this many groups share their first prefix_tokens tokens "
                               "(prefix caching); 0: none",
         OptionType::count},
        {"prefix_tokens", "0", "the shared prefix's length in tokens", OptionType::count},
        {"turns", "1", "synthetic: multi-turn sessions of this many turns, each turn sent after the last one ended",
         OptionType::count},
        {"prompt_form", "auto",
         "token_ids (completions: exact prompt lengths, ids below vocab), text (seeded words; lengths then as the "
         "server counts them), auto (token ids where the model's vocabulary is known)",
         OptionType::choice},
        {"vocab", "0", "token ids are drawn below this (0: the model's vocabulary where inferbench can read it)",
         OptionType::count},
        {"ignore_eos", "true", "ask the server to generate max_tokens whatever the tokens (llama.cpp, vLLM, SGLang)",
         OptionType::flag},
        {"continuous_usage", "false",
         "ask for usage in every streamed chunk (vLLM's and SGLang's stream_options.continuous_usage_stats), so "
         "that a chunk carrying several tokens is counted exactly; servers without it may refuse the field",
         OptionType::flag},
        {"gpus", "0", "GPUs the server uses, for output tokens/s per GPU (0: 1 for a cuda cell, unknown for cpu)",
         OptionType::count},
    };
}

ServingOptions read_serving_options(const BenchmarkSpec& spec) {
    // arg_NAME options are the plan's own values for the server's command ({arg_NAME}), not options of ours.
    OptionMap declared;
    for (const auto& [name, value] : spec.backend_options)
        if (!name.starts_with(kServerArgPrefix)) declared.emplace(name, value);
    const OptionReader reader(std::string(kName), declared, openai_options());
    ServingOptions o;
    o.endpoint = reader.text("endpoint");
    static constexpr std::pair<std::string_view, ServingApi> kApis[] = {{"completions", ServingApi::completions},
                                                                        {"chat", ServingApi::chat}};
    o.api = reader.choice("api", kApis);
    o.model_name = reader.text("model_name");
    if (o.model_name.empty()) o.model_name = std::string(served_model_name(spec.model));
    o.api_key_env = reader.text("api_key_env");
    o.server_command = reader.text("server_command");
    o.health_path = reader.text("health_path");
    if (!o.health_path.starts_with('/')) reader.reject("health_path", o.health_path, "a path beginning with /");
    o.server_ready_timeout_ns = duration_option(reader, "server_ready_timeout", false);
    o.request_timeout_ns = duration_option(reader, "request_timeout", false);
    o.requests = reader.count("requests", 10'000'000);
    o.warmup_requests = reader.count("warmup_requests", 100'000);
    o.burstiness = number_option(reader, "burstiness", 0.01, 100);
    o.slos = {duration_option(reader, "ttft_bound", true), duration_option(reader, "tpot_bound", true),
              duration_option(reader, "e2e_bound", true)};
    o.workload = reader.text("workload");
    o.length_distribution = reader.choice("length_distribution", {"fixed", "uniform", "normal"});
    o.length_spread = number_option(reader, "length_spread", 0, 1);
    o.prefix_groups = reader.count("prefix_groups", 1'000'000);
    o.prefix_tokens = reader.count("prefix_tokens", kMaxGenerationTokens);
    o.turns = reader.count("turns", 1000);
    if (o.turns == 0) reader.reject("turns", "0", "a count of 1 or more");
    o.prompt_form = reader.choice("prompt_form", {"auto", "token_ids", "text"});
    o.vocab = reader.count("vocab", std::int64_t{1} << 24);
    o.ignore_eos = reader.flag("ignore_eos");
    o.continuous_usage = reader.flag("continuous_usage");
    o.gpus = reader.count("gpus", 1024);
    if (o.api == ServingApi::chat && o.prompt_form == "token_ids")
        reader.reject("prompt_form", "token_ids", "text or auto: chat messages are text");
    return o;
}

}  // namespace inferbench
