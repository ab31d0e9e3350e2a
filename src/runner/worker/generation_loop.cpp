#include "runner/worker/generation_loop.hpp"

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/metrics/decoder_metrics.hpp"

namespace inferbench::runner {

std::vector<BackendMetric> decoder_metrics(const DecoderInfo& info) {
    namespace dm = decoder_metrics;
    const DecoderShape& s = info.shape;
    const auto count = [](std::string_view name, std::int64_t value, std::string_view unit = "count") {
        return BackendMetric{std::string(name), static_cast<double>(value), std::string(unit)};
    };
    return {count(dm::kParameters, parameter_count(s)),
            count(dm::kWeightBytes, info.weight_bytes, "B"),
            count(dm::kParametersReadPerStep, parameters_read_per_step(s)),
            count(dm::kKvBytesPerToken,
                  kv_elements_per_token(s) * static_cast<std::int64_t>(size_of(info.kv_dtype)), "B"),
            count(dm::kLayers, s.layers),
            count(dm::kHidden, s.hidden),
            count(dm::kHeads, s.heads),
            count(dm::kKvHeads, s.kv_heads),
            count(dm::kHeadDim, s.head_dim),
            count(dm::kIntermediate, s.intermediate),
            count(dm::kVocab, s.vocab),
            count(dm::kMaxContext, s.max_context, "tokens"),
            count(dm::kTiedEmbeddings, s.tied_embeddings ? 1 : 0, "flag")};
}

std::optional<std::string> generation_problem(const BenchmarkSpec& spec, const DecoderInfo& info) {
    if (const auto why = shape_problem(info.shape)) return fmt::format("the decoder has {}", *why);
    const std::int64_t context = spec.generation.input_tokens + spec.generation.output_tokens;
    if (context > info.shape.max_context)
        return fmt::format("input_tokens {} + output_tokens {} = {} tokens is longer than the model's context of {}; "
                           "lower input_tokens or output_tokens",
                           spec.generation.input_tokens, spec.generation.output_tokens, context, info.shape.max_context);
    return std::nullopt;
}

GenerationRequest generation_request(const BenchmarkSpec& spec, const DecoderInfo& info) {
    GenerationRequest request;
    request.batch = spec.batch_size;
    request.input_tokens = spec.generation.input_tokens;
    request.output_tokens = spec.generation.output_tokens;
    request.prompts = generation_prompts(spec.batch_size, spec.generation.input_tokens, info.shape.vocab, spec.seed);
    request.sampling = spec.generation.sampling;
    request.seed = spec.seed;
    return request;
}

GenerationIterations::GenerationIterations(Backend& engine, const GenerationRequest& request, const DecoderInfo& info)
    : engine_(engine),
      request_(request),
      kv_bytes_per_token_(kv_elements_per_token(info.shape) * static_cast<std::int64_t>(size_of(info.kv_dtype))) {
    steps_.reserve(static_cast<std::size_t>(request.output_tokens));
}

void GenerationIterations::start_recording() {
    recording_ = true;
    finished_ = false;
    next_iteration_ = 0;
    kept_.clear();
    kept_steps_ = 0;
    first_tokens_.clear();
    first_tokens_.reserve(static_cast<std::size_t>(request_.batch * request_.output_tokens));
    keep_tokens_ = true;
}

void GenerationIterations::collect() {
    if (!finished_) return;
    finished_ = false;
    kept_.push_back({next_iteration_++, steps_});
    kept_steps_ += steps_.size();
}

std::optional<GenerationIterations::Batch> GenerationIterations::take(std::size_t min_steps) {
    if (kept_.empty() || kept_steps_ < min_steps) return std::nullopt;
    Batch batch{std::move(kept_), std::move(first_tokens_)};
    kept_ = {};
    first_tokens_ = {};
    kept_steps_ = 0;
    return batch;
}

void GenerationIterations::load(const std::string& model_path, const BenchmarkSpec& spec) { engine_.load(model_path, spec); }
std::vector<TensorInfo> GenerationIterations::inputs() const {
    return {TensorInfo{"input_ids", DType::i32, {request_.batch, request_.input_tokens}}};
}
void GenerationIterations::prepare(std::span<const HostTensor> /*inputs*/) { engine_.prepare_generation(request_); }

void GenerationIterations::infer(DeviceTimes& /*times*/) {
    steps_.clear();
    engine_.generate(*this);
    const auto expected = static_cast<std::size_t>(request_.output_tokens);
    if (steps_.size() != expected && !stop_requested())
        throw std::runtime_error(fmt::format("the engine handed over {} steps of a generation of {} tokens",
                                             steps_.size(), expected));
    if (!recording_) return;
    finished_ = true;
    keep_tokens_ = false;
}

void GenerationIterations::step(std::span<const std::int32_t> tokens) { step_ended_at(monotonic_ns(), tokens); }

void GenerationIterations::step_ended_at(std::int64_t end_ns, std::span<const std::int32_t> tokens) {
    if (static_cast<std::int64_t>(tokens.size()) != request_.batch)
        throw std::runtime_error(
            fmt::format("the engine handed over {} tokens for a batch of {}", tokens.size(), request_.batch));
    const auto step = static_cast<std::int64_t>(steps_.size());
    steps_.push_back({end_ns, kv_cache_bytes(request_.batch, request_.input_tokens, step, kv_bytes_per_token_)});
    if (recording_ && keep_tokens_) first_tokens_.insert(first_tokens_.end(), tokens.begin(), tokens.end());
}

bool GenerationIterations::stop_requested() const { return stop_ && stop_->load(std::memory_order_relaxed) != 0; }

}  // namespace inferbench::runner
