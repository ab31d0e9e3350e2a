// A backend whose iterations run in a runner program speaking the external-runner protocol
// (docs/external-runner-protocol.md): Python-only frameworks measured under the harness's rules, clock,
// statistics and storage. One class for every runner; the variant says which runner and options.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/external/child_process.hpp"
#include "backends/external/external_protocol.hpp"
#include "backends/external/external_variants.hpp"

namespace inferbench::external {

struct ExternalTimeouts {
    std::int64_t describe_ns = 120'000'000'000;   // importing TensorFlow on a cold disk takes a while
    std::int64_t stop_grace_ns = 10'000'000'000;  // after SIGTERM, before SIGKILL
};

class ExternalBackend final : public Backend {
public:
    explicit ExternalBackend(const ExternalVariant& variant, ExternalTimeouts timeouts = {});

    std::string name() const override { return variant_.name; }
    // The framework's version from the runner's header (of the run once loaded, else of --describe).
    std::string version() const override;
    Capabilities capabilities() const override;
    std::vector<BackendOption> options() const override { return variant_.options; }
    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override;

    // Starts the runner with the request and returns once its header says the model is ready: the
    // harness's load time covers the interpreter's start, the import and the model's load.
    void load(const std::string& model_path, const BenchmarkSpec& spec) override;
    // The runner makes its own inputs (seeded), or reads the plan's input files itself (the request's "inputs"):
    // the harness has none to give.
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor> /*inputs*/) override {}
    void infer(DeviceTimes& times) override;
    OwnLoopReport run_own_loop(const LoopSettings& settings, IterationSink& sink) override;
    // What the runner's header reported (build, compile and capture times) and the pre- and post-processing
    // times it reported for the iterations stored (core/metrics/host_stage_metrics).
    std::vector<BackendMetric> measured_metrics() const override;
    // Where the plan gave input files: the samples the runner read and whether it cycled them (its header's
    // "inputs", core/metrics/harness_metrics).
    std::vector<BackendMetric> prepared_metrics() const override;

    // Generation (variants that generate: runners/torch_generate.py). The shape is read from the model folder's
    // config.json in load(), before the runner starts; the prompts go to the runner once (untimed, it answers
    // "prepared"); each generate() is one command, answered by one step line per step and a generated line.
    DecoderInfo decoder_info() const override;
    void prepare_generation(const GenerationRequest& request) override;
    void generate(TokenSink& sink) override;

private:
    struct Described {
        std::optional<RunnerHeader> header;
        std::string problem;             // why there is no header
        bool framework_missing = false;  // exit code 3 or 127: worth trying the next interpreter
    };
    struct LoopState;

    const Described& describe(const OptionMap& options) const;
    Described describe_uncached(const OptionMap& options) const;
    Described describe_with(const std::vector<std::string>& command) const;
    // One command per interpreter to try (one for the generic backend); throws EnvironmentError when
    // the runner script or the command is missing.
    std::vector<std::vector<std::string>> launch_commands(const OptionMap& options) const;
    bool await_header();
    void check_inputs_taken(const BenchmarkSpec& spec);
    void handle_line(const std::string& text, IterationSink& sink, LoopState& state);
    void request_stop_if_needed(const IterationSink& sink, LoopState& state);
    void finish(const LoopState& state, const ExitStatus& status) const;
    std::string failure(const ExitStatus& status, std::string_view when) const;
    // The next protocol line of a generation (runner text printed on the way), between_reads() called while
    // waiting for it; nothing once stdout closed.
    std::optional<RunnerLine> next_generation_line(const std::function<void()>& between_reads);
    [[noreturn]] void fail_generation(std::string_view when);

    const ExternalVariant& variant_;
    ExternalTimeouts timeouts_;
    mutable std::mutex describe_mutex_;
    mutable std::map<std::string, Described> described_;  // by interpreter option or command
    std::unique_ptr<ChildProcess> child_;
    std::optional<RunnerHeader> header_;
    std::vector<std::string> pending_lines_;  // read together with the header
    std::string error_message_;               // the runner's error line
    HostStageTotals stages_;                  // of the last run_own_loop's stored iterations
    std::optional<DecoderInfo> decoder_;      // a generating variant's model, from load()
    std::optional<GenerationRequest> generation_;  // prepared
};

std::unique_ptr<Backend> make_external_backend(std::string_view name);

}  // namespace inferbench::external
