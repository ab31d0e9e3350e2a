// inferbench's side of the external-runner protocol (docs/external-runner-protocol.md): the request a
// runner reads on stdin and the lines it prints on stdout. Pure functions over strings, so tests feed
// them text.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend.hpp"
#include "core/spec.hpp"

namespace inferbench::external {

inline constexpr int kProtocolVersion = 1;
// A runner exits with this code when its framework cannot be imported: the next interpreter is tried.
inline constexpr int kExitFrameworkMissing = 3;

// A runner printed something the protocol does not allow.
class ProtocolError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// What a runner says about itself: the header line of a run, and with capabilities, of --describe.
struct RunnerHeader {
    std::string framework;
    std::string version;
    std::string device;
    std::string device_name;
    // --describe only.
    std::vector<std::string> devices;                                   // "cpu", "cuda"
    std::map<std::string, std::vector<std::string>> precisions;         // device kind -> "fp32", ...
    std::map<std::string, std::string> notes;                           // "cpu/fp16" -> why it is missing
    std::map<std::string, std::vector<std::string>> precision_formats;  // "fp16" -> model formats
    std::string unavailable;                                            // set: no cell can run
    std::vector<std::string> zoo_models;                                // the zoo models it builds; empty: not said
    std::map<std::string, std::string> missing_libraries;               // spec library ("hf") -> why it is missing
    std::vector<BackendMetric> metrics;  // measured before the header (model build, compile, capture)
    // A run given the plan's input files (the request's "inputs"): the samples it read and whether it feeds them
    // one per iteration, in turn (else the first feeds every one). Unset: the runner did not say it took them.
    struct InputsFed {
        std::int64_t samples = 0;
        bool cycled = false;
    };
    std::optional<InputsFed> inputs;

    // Why `target` x `precision` cannot run with a model of `format`, or empty.
    std::string refusal(const Device& target, Precision precision, std::string_view format) const;
    // Why the runner cannot build `model` (a zoo name it lacks, a spec whose library is missing), or empty.
    std::string model_refusal(const std::string& model) const;
};

struct RunnerLine {
    // step, prepared, generated: a generative cell's lines (docs/external-runner-protocol.md, "Generation").
    enum class Kind { header, iteration, done, error, text, step, prepared, generated };
    Kind kind = Kind::text;
    RunnerHeader header;
    IterationRecord record;
    // Parts of record.e2e_ns the runner spent before and after the model (kNotMeasured: not reported).
    std::int64_t pre_ns = kNotMeasured;
    std::int64_t post_ns = kNotMeasured;
    std::int64_t done_iterations = 0;
    std::string text;  // the error message, or the line itself for text
    std::int64_t done_warmup_iterations = kNotMeasured;  // the done line's warm-up, where it says
    std::int64_t done_warmup_ns = kNotMeasured;
    // A step line ("step END_NS TOKEN..."): when the step's tokens were in the runner's host memory, on
    // CLOCK_MONOTONIC, and one token per sequence.
    std::int64_t step_end_ns = 0;
    std::vector<std::int32_t> step_tokens;
    // The generated line: the steps it printed and when the generation began (the runner's clock).
    std::int64_t generated_steps = 0;
    std::int64_t generated_start_ns = kNotMeasured;
};

// The pre- and post-processing the runner reported for the iterations stored, summed, as the figures of
// core/metrics/host_stage_metrics: means over the iterations that reported a stage; a stage some of them left out is not
// given (its mean would be over other iterations than the end-to-end mean's).
class HostStageTotals {
public:
    void add(const RunnerLine& iteration);
    std::vector<BackendMetric> metrics() const;

private:
    std::int64_t iterations_ = 0, pre_count_ = 0, post_count_ = 0;
    double pre_sum_ns_ = 0, post_sum_ns_ = 0, e2e_sum_ns_ = 0;
};

// One stdout line (without its newline). A line that does not start with '{' is the runner's own
// output (Kind::text); a JSON line that breaks the protocol throws ProtocolError.
RunnerLine parse_runner_line(std::string_view line);

// The request written to the runner's stdin for one benchmark cell; "inputs" (the plan's input files) only where
// the plan gives them; "generation" (the lengths and sampling) only for a generative cell.
nlohmann::json make_request(const std::string& model, const BenchmarkSpec& spec);

// A generative cell's runner reads commands, one JSON object a line, on this descriptor (stdin carries the
// request alone); end of file on it ends the runner.
inline constexpr int kGenerationCommandFd = 3;
// The commands: the prompts and lengths once, untimed (answered by a prepared line), then one generation each.
nlohmann::json make_prepare_command(const GenerationRequest& request);
nlohmann::json make_generate_command();

}  // namespace inferbench::external
