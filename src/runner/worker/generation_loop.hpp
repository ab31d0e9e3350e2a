// A generative cell in the worker: one iteration of the harness's loops is one generation (prefill of the
// batch's prompts, then decode steps), so warm-up, the measured loop, stopping criteria and the trace work as
// for any cell; beside each measured iteration the worker keeps its steps' times (core/generation).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/generation.hpp"
#include "core/spec.hpp"

namespace inferbench::runner {

// The decoder's figures stored with the benchmark (core/metrics/decoder_metrics).
std::vector<BackendMetric> decoder_metrics(const DecoderInfo& info);

// Why the loaded decoder cannot run the cell (prompt and output longer than its context), or nothing.
std::optional<std::string> generation_problem(const BenchmarkSpec& spec, const DecoderInfo& info);

// The cell's request: seeded prompts over the decoder's vocabulary.
GenerationRequest generation_request(const BenchmarkSpec& spec, const DecoderInfo& info);

// Runs one generation per infer(): what the measure loops time. Each step's end is taken when the engine
// hands its tokens over (TokenSink::step) or as the engine timed it (step_ended_at); a generation that ends
// with fewer steps than asked for, not stopped, is an error (the engine broke its contract). Nothing is copied
// or allocated inside a generation: its steps are kept by collect(), which runs between iterations, untimed.
class GenerationIterations final : public Backend, private TokenSink {
public:
    GenerationIterations(Backend& engine, const GenerationRequest& request, const DecoderInfo& info);

    // Keeps what later iterations measure, not what came before (the warm-up's generations).
    void start_recording();
    // Untimed, between iterations: the generation just measured joins the kept ones.
    void collect();
    // The kept generations' steps and, the first time, the first generation's tokens (step-major: step s, sequence
    // b at s * batch + b), handed over and forgotten, so that the worker's memory stays bounded however long the
    // run. Nothing where fewer than `min_steps` steps are kept.
    struct Batch {
        std::vector<GenerationRecord> generations;
        std::vector<std::int32_t> first_tokens;
    };
    std::optional<Batch> take(std::size_t min_steps);

    // Backend: infer() is one generation; the rest is the engine's.
    std::string name() const override { return engine_.name(); }
    std::string version() const override { return engine_.version(); }
    Capabilities capabilities() const override { return engine_.capabilities(); }
    void load(const std::string& model_path, const BenchmarkSpec& spec) override;
    std::vector<TensorInfo> inputs() const override;
    void prepare(std::span<const HostTensor> inputs) override;
    void infer(DeviceTimes& times) override;

    // Ctrl-C or the cell's time: the engine may end a generation early (then it is kept as far as it went).
    void stop_when(const std::atomic<std::int32_t>* stop) { stop_ = stop; }

private:
    void step(std::span<const std::int32_t> tokens) override;
    void step_ended_at(std::int64_t end_ns, std::span<const std::int32_t> tokens) override;
    bool stop_requested() const override;

    Backend& engine_;
    GenerationRequest request_;
    std::int64_t kv_bytes_per_token_ = 0;
    bool recording_ = false;
    bool finished_ = false;  // steps_ holds a measured generation collect() has not kept yet
    std::int64_t next_iteration_ = 0;
    std::vector<GenerationStep> steps_;  // of the generation in flight
    std::vector<GenerationRecord> kept_;
    std::size_t kept_steps_ = 0;
    std::vector<std::int32_t> first_tokens_;
    bool keep_tokens_ = false;
    const std::atomic<std::int32_t>* stop_ = nullptr;
};

}  // namespace inferbench::runner
