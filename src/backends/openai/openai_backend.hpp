// The openai backend: a server that speaks the OpenAI HTTP API (vLLM, SGLang, TensorRT-LLM, llama.cpp's
// llama-server, Ollama), measured from the client's side. Built in, like null: it needs no framework here.
// Its cells never reach infer(): the worker sends their requests through runner/worker/serving_cell (the
// HTTP client is module serving). This class says what such a cell may be (unsupported_reason) and
// declares its options, so that `list backends`, `run --dry-run` and the plan's checks treat it as any other.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "core/serving.hpp"

namespace inferbench {

std::unique_ptr<Backend> make_openai_backend();

// Options named arg_NAME are values for the server's command ({arg_NAME} in server_command), a list sweeping a
// server setting as an axis; inferbench reads nothing else from them.
inline constexpr std::string_view kServerArgPrefix = "arg_";

// A serving cell's settings, read once from its backend options (defaults and help in openai_options()).
struct ServingOptions {
    std::string endpoint;          // base URL; empty: the server that server_command starts, on a free port
    ServingApi api = ServingApi::completions;
    std::string model_name;        // the request's "model"; empty: served:NAME's NAME, else the server's first model
    std::string api_key_env;       // the environment variable that holds the API key (the key is never stored)
    std::string server_command;    // optional: started per cell, {model} {port} {host} {precision} {OPTION} filled
    std::string health_path = "/health";
    std::int64_t server_ready_timeout_ns = 0;
    std::int64_t request_timeout_ns = 0;
    std::int64_t requests = 0;          // measured requests at most (0: until the duration ends)
    std::int64_t warmup_requests = 0;
    double burstiness = 1.0;            // server scenario: gamma shape of the gaps (1: Poisson)
    ServingSlos slos;
    std::string workload = "synthetic";  // synthetic, or a JSONL file of prompts (ShareGPT too), or a stored workload
    std::string length_distribution = "fixed";
    double length_spread = 0;
    std::int64_t prefix_groups = 0;
    std::int64_t prefix_tokens = 0;
    std::int64_t turns = 1;
    std::string prompt_form = "auto";    // auto, token_ids, text
    std::int64_t vocab = 0;              // token ids are drawn below it; 0: the model's, where inferbench can read it
    bool ignore_eos = true;
    bool continuous_usage = false;       // usage in every chunk (vLLM, SGLang): multi-token chunks counted exactly
    std::int64_t gpus = 0;               // GPUs the server uses, for tokens/s per GPU; 0: the cell's device (1 if cuda)
};

// The options declared (name, default, help), the one source of their defaults.
std::vector<BackendOption> openai_options();
// Throws UserError (one line, naming the option) for a bad value.
ServingOptions read_serving_options(const BenchmarkSpec& spec);

}  // namespace inferbench
