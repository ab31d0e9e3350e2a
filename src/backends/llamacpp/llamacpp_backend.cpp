#include "backends/llamacpp/llamacpp_backend.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>
#include <llama.h>

#include "backends/llamacpp/llamacpp_runtime.hpp"
#include "backends/options.hpp"
#include "backends/token_choice.hpp"
#include "core/error.hpp"
#include "models/gguf_writer.hpp"

#ifndef INFERBENCH_LLAMA_CPP_VERSION
#define INFERBENCH_LLAMA_CPP_VERSION "unknown"
#endif

namespace inferbench {
namespace llamacpp {

ContextPlan plan_context(std::int64_t batch, const GenerationSettings& generation) {
    ContextPlan plan;
    plan.tokens_per_sequence = generation.input_tokens + generation.output_tokens;
    plan.n_seq_max = std::max<std::int64_t>(batch, 1);
    plan.n_ctx = plan.tokens_per_sequence * plan.n_seq_max;
    plan.n_batch = std::max(generation.input_tokens * plan.n_seq_max, plan.n_seq_max);
    return plan;
}

std::optional<std::string> context_problem(const ContextPlan& plan, std::int64_t max_context) {
    if (plan.tokens_per_sequence <= max_context) return std::nullopt;
    return fmt::format("input_tokens + output_tokens = {} is longer than the model's context of {} tokens; "
                       "shorten the prompt or the output",
                       plan.tokens_per_sequence, max_context);
}

std::int64_t kv_cache_bytes(const ContextPlan& plan, std::int64_t kv_elements_per_token, std::int64_t element_bytes) {
    return plan.n_ctx * kv_elements_per_token * element_bytes;
}

}  // namespace llamacpp

namespace {

using namespace llamacpp;

constexpr const char* kName = "llamacpp";

std::vector<BackendOption> llamacpp_options() {
    BackendOption threads = threads_option();
    threads.default_value = "1";
    return {threads};
}

struct ModelDeleter {
    void operator()(llama_model* m) const { llama_model_free(m); }
};
struct ContextDeleter {
    void operator()(llama_context* c) const { llama_free(c); }
};

// A llama_batch that frees itself.
class Batch {
public:
    explicit Batch(std::int64_t tokens) : batch_(llama_batch_init(static_cast<std::int32_t>(tokens), 0, 1)) {}
    ~Batch() { llama_batch_free(batch_); }
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;
    void set(std::int32_t i, llama_token token, llama_pos position, llama_seq_id sequence, bool output) {
        batch_.token[i] = token;
        batch_.pos[i] = position;
        batch_.n_seq_id[i] = 1;
        batch_.seq_id[i][0] = sequence;
        batch_.logits[i] = output ? 1 : 0;
    }
    void resize(std::int32_t tokens) { batch_.n_tokens = tokens; }
    const llama_batch& get() const { return batch_; }

private:
    llama_batch batch_;
};

class LlamaCppBackend final : public Backend {
public:
    std::string name() const override { return kName; }
    std::string version() const override { return INFERBENCH_LLAMA_CPP_VERSION; }
    std::vector<BackendOption> options() const override { return llamacpp_options(); }

    Capabilities capabilities() const override {
        Capabilities caps;
        caps.devices = {DeviceKind::cpu};
        if (gpu_device_count() > 0) caps.devices.push_back(DeviceKind::cuda);
        caps.precisions = {Precision::fp32, Precision::fp16, Precision::bf16, Precision::int8, Precision::int4};
        caps.model_formats = {"gguf"};
        caps.generates = true;
        return caps;
    }

    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override {
        if (!spec.generation.active())
            return fmt::format("backend {} runs decoder language models only: a generative cell (input_tokens > 0)",
                               kName);
        return Backend::unsupported_reason(spec);
    }

    void load(const std::string& model_path, const BenchmarkSpec& spec) override;
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor> /*inputs*/) override { refuse_inference(); }
    void infer(DeviceTimes& /*times*/) override { refuse_inference(); }

    DecoderInfo decoder_info() const override {
        if (!model_) throw UserError("llamacpp: decoder_info() before load()");
        return info_;
    }
    void prepare_generation(const GenerationRequest& request) override;
    void generate(TokenSink& sink) override;

private:
    [[noreturn]] static void refuse_inference() {
        throw UserError(fmt::format("backend {} runs generation only (Backend::generate)", kName));
    }
    void load_model(const std::string& path, const Device& device, ggml_backend_dev_t dev);
    void create_context(const std::string& path, const BenchmarkSpec& spec, ggml_backend_dev_t dev, std::int64_t threads);
    void decode(const Batch& batch, std::string_view what);
    void choose_tokens(std::span<const std::int32_t> logit_rows, std::vector<std::int32_t>& out);

    std::unique_ptr<llama_model, ModelDeleter> model_;
    std::unique_ptr<llama_context, ContextDeleter> context_;
    std::string path_;
    DecoderInfo info_;
    ContextPlan plan_;
    std::int64_t vocab_ = 0;
    GenerationRequest request_;
    std::unique_ptr<Batch> prefill_;
    std::unique_ptr<Batch> step_;
    std::optional<TokenChooser> choice_;  // one per generation: its seeded stream starts afresh
};

void LlamaCppBackend::load_model(const std::string& path, const Device& device, ggml_backend_dev_t dev) {
    std::vector<ggml_backend_dev_t> devices;
    if (device.kind == DeviceKind::cuda) devices.push_back(dev);
    devices.push_back(nullptr);
    llama_model_params params = llama_model_default_params();
    params.devices = devices.data();
    params.n_gpu_layers = device.kind == DeviceKind::cuda ? -1 : 0;
    params.split_mode = LLAMA_SPLIT_MODE_NONE;
    take_last_error();
    model_.reset(llama_model_load_from_file(path.c_str(), params));
    if (!model_) {
        const std::string why = take_last_error();
        throw UserError(fmt::format("{}: llama.cpp cannot load it ({}); write it again or use another GGUF file",
                                    path, why.empty() ? "no reason given" : why));
    }
}

void LlamaCppBackend::create_context(const std::string& path, const BenchmarkSpec& spec, ggml_backend_dev_t dev,
                                     std::int64_t threads) {
    plan_ = plan_context(spec.batch_size, spec.generation);
    if (const auto problem = context_problem(plan_, info_.shape.max_context))
        throw UserError(fmt::format("{}: {}", path, *problem));
    const std::int64_t element = info_.kv_dtype == DType::f32 ? 4 : 2;
    const std::int64_t kv_bytes = kv_cache_bytes(plan_, kv_elements_per_token(info_.shape), element);
    std::size_t free_bytes = 0, total_bytes = 0;
    ggml_backend_dev_memory(dev, &free_bytes, &total_bytes);
    if (free_bytes > 0 && kv_bytes > static_cast<std::int64_t>(free_bytes))
        throw UserError(fmt::format("{}: out of memory: the KV cache of batch {} x {} tokens needs {:.1f} MiB, {} "
                                    "has {:.1f} MiB free; lower the batch or the tokens",
                                    path, plan_.n_seq_max, plan_.tokens_per_sequence, static_cast<double>(kv_bytes) / 0x1p20,
                                    to_string(spec.device), static_cast<double>(free_bytes) / 0x1p20));
    llama_context_params params = llama_context_default_params();
    params.n_ctx = static_cast<std::uint32_t>(plan_.n_ctx);
    params.n_seq_max = static_cast<std::uint32_t>(plan_.n_seq_max);
    params.n_batch = static_cast<std::uint32_t>(plan_.n_batch);
    params.n_threads = params.n_threads_batch = static_cast<std::int32_t>(threads);
    params.type_k = params.type_v = info_.kv_dtype == DType::f32 ? GGML_TYPE_F32 : GGML_TYPE_F16;
    params.offload_kqv = params.op_offload = spec.device.kind == DeviceKind::cuda;
    params.no_perf = true;
    take_last_error();
    context_.reset(llama_init_from_model(model_.get(), params));
    if (!context_) {
        const std::string why = take_last_error();
        throw UserError(fmt::format("{}: llama.cpp cannot make a context of {} tokens for {} sequences ({}); "
                                    "lower the batch or the tokens",
                                    path, plan_.n_ctx, plan_.n_seq_max, why.empty() ? "no reason given" : why));
    }
}

void LlamaCppBackend::load(const std::string& model_path, const BenchmarkSpec& spec) {
    const OptionReader options(kName, spec.backend_options, llamacpp_options());  // a bad option before any work
    std::int64_t threads = options.count("threads", 4096);
    if (threads == 0) threads = std::max<std::int64_t>(1, std::thread::hardware_concurrency());
    ensure_runtime();
    ggml_backend_dev_t dev = find_device(spec.device);
    if (dev == nullptr)
        throw UserError(fmt::format("backend {}: llama.cpp found no {} device (its CUDA module needs CUDA 13 "
                                    "libraries: scripts/fetch-llama-cpp.sh --cuda)", kName, to_string(spec.device)));
    // A second load() replaces the first: the context goes before the model it was made from.
    prefill_.reset();
    step_.reset();
    context_.reset();
    model_.reset();
    path_ = model_path;
    info_.shape = models::read_gguf_decoder_shape(model_path);  // one clear line for a header that is cut short
    info_.kv_dtype = spec.precision == Precision::fp32 ? DType::f32 : DType::f16;
    load_model(model_path, spec.device, dev);
    char architecture[64] = {};
    llama_model_meta_val_str(model_.get(), "general.architecture", architecture, sizeof architecture);
    info_.architecture = architecture;
    info_.weight_bytes = static_cast<std::int64_t>(llama_model_size(model_.get()));
    vocab_ = llama_vocab_n_tokens(llama_model_get_vocab(model_.get()));
    create_context(model_path, spec, dev, threads);
}

void LlamaCppBackend::prepare_generation(const GenerationRequest& request) {
    if (!context_) throw UserError("llamacpp: prepare_generation() before load()");
    if (request.batch > plan_.n_seq_max || request.input_tokens + request.output_tokens > plan_.tokens_per_sequence ||
        request.input_tokens < 1 || request.output_tokens < 1 ||
        static_cast<std::int64_t>(request.prompts.size()) != request.batch * request.input_tokens)
        throw UserError(fmt::format("llamacpp: a generation of batch {} x ({} + {}) tokens does not match the context "
                                    "loaded for {} x {}",
                                    request.batch, request.input_tokens, request.output_tokens, plan_.n_seq_max,
                                    plan_.tokens_per_sequence));
    for (const std::int32_t token : request.prompts)
        if (token < 0 || token >= vocab_)
            throw UserError(fmt::format("{}: prompt token {} is outside the vocabulary of {}", path_, token, vocab_));
    request_ = request;
    prefill_ = std::make_unique<Batch>(request.batch * request.input_tokens);
    for (std::int64_t s = 0; s < request.batch; ++s)
        for (std::int64_t t = 0; t < request.input_tokens; ++t) {
            const std::int64_t i = s * request.input_tokens + t;
            prefill_->set(static_cast<std::int32_t>(i), request.prompts[static_cast<std::size_t>(i)],
                          static_cast<llama_pos>(t), static_cast<llama_seq_id>(s), t + 1 == request.input_tokens);
        }
    prefill_->resize(static_cast<std::int32_t>(request.batch * request.input_tokens));
    step_ = std::make_unique<Batch>(request.batch);
    step_->resize(static_cast<std::int32_t>(request.batch));
}

void LlamaCppBackend::decode(const Batch& batch, std::string_view what) {
    const std::int32_t status = llama_decode(context_.get(), batch.get());
    if (status == 0) return;
    const std::string why = take_last_error();
    if (status == 1)
        throw UserError(fmt::format("{}: out of memory: no room in the KV cache for the {}", path_, what));
    throw UserError(fmt::format("{}: llama_decode of the {} failed with status {} ({})", path_, what, status,
                                why.empty() ? "no reason given" : why));
}

void LlamaCppBackend::choose_tokens(std::span<const std::int32_t> logit_rows, std::vector<std::int32_t>& out) {
    for (std::size_t s = 0; s < logit_rows.size(); ++s) {
        const float* logits = llama_get_logits_ith(context_.get(), logit_rows[s]);
        if (logits == nullptr) throw UserError(fmt::format("{}: llama.cpp returned no logits", path_));
        out[s] = choice_->choose(std::span<const float>(logits, static_cast<std::size_t>(vocab_)));
    }
}

void LlamaCppBackend::generate(TokenSink& sink) {
    if (!prefill_) throw UserError("llamacpp: generate() before prepare_generation()");
    llama_memory_clear(llama_get_memory(context_.get()), true);
    choice_.emplace(request_.sampling, request_.seed);
    const auto batch = static_cast<std::size_t>(request_.batch);
    std::vector<std::int32_t> rows(batch), tokens(batch);
    for (std::size_t s = 0; s < batch; ++s)
        rows[s] = static_cast<std::int32_t>((static_cast<std::int64_t>(s) + 1) * request_.input_tokens - 1);
    decode(*prefill_, "prefill");
    choose_tokens(rows, tokens);
    sink.step(tokens);
    for (std::size_t s = 0; s < batch; ++s) rows[s] = static_cast<std::int32_t>(s);
    for (std::int64_t step = 1; step < request_.output_tokens && !sink.stop_requested(); ++step) {
        const auto position = static_cast<llama_pos>(request_.input_tokens + step - 1);
        for (std::size_t s = 0; s < batch; ++s)
            step_->set(static_cast<std::int32_t>(s), tokens[s], position, static_cast<llama_seq_id>(s), true);
        decode(*step_, "decode step");
        choose_tokens(rows, tokens);
        sink.step(tokens);
    }
}

}  // namespace

std::unique_ptr<Backend> make_llamacpp_backend() { return std::make_unique<LlamaCppBackend>(); }

}  // namespace inferbench
