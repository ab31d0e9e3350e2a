// A benchmark plan: sweep axes (each a list; the matrix is their Cartesian product), exclusion
// rules, run settings and per-backend options. Read from YAML, overridden from the command line. Every
// value is read into its type here, once (devices as Device, precisions as Precision, batch sizes as
// integers); the text form comes back only where a plan is written out (plan_to_json, --help).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/plan/cpu_affinity.hpp"
#include "core/plan/pipeline_plan.hpp"
#include "core/plan/settings.hpp"
#include "core/spec.hpp"

namespace inferbench {

// A rule drops every cell whose named fields all match.
struct ExcludeRule {
    std::optional<std::string> model, backend;
    std::optional<Device> device;
    std::optional<Precision> precision;
    std::optional<std::int64_t> batch_size;
    std::optional<std::int64_t> input_tokens, output_tokens;  // match generative cells only

    bool matches(const BenchmarkSpec& spec) const;
};

// A setting given as a list (core/plan/settings: kSweepableSettings), e.g. concurrency: [1, 2, 4] or
// --set concurrency=1,2,4: a sweep axis like the batch sizes. Each value is read once, into a RunSettings of its
// own of which only this setting is used (copy_setting); a list of one value is a plain setting.
struct SettingAxis {
    std::string key;
    std::vector<RunSettings> values;
};

// The backend that measures a running server through the OpenAI HTTP API (backends/openai).
inline constexpr std::string_view kServingBackend = "openai";
// `endpoint: URL` (or --set endpoint=URL, a list sweeps servers): the openai backend's server, short for
// backend_options.openai.endpoint.
inline constexpr std::string_view kEndpointKey = "endpoint";
// `pipeline: {images: synthetic, ...}` (or --set pipeline.KEY=VALUE): image pipeline cells (core/plan/pipeline_plan).
inline constexpr std::string_view kPipelineKey = "pipeline";

// The member initialisers are the defaults, and together they are the embedded default plan that
// `inferbench run` uses when given none: a short real benchmark of two networks on this machine's CPU.
struct Plan {
    std::string source = "<default plan>";
    std::vector<std::string> models = {"mobilenet", "resnet50"};
    std::vector<std::string> backends = {"onnxruntime"};
    std::vector<Device> devices = {Device{DeviceKind::cpu, 0}};
    std::vector<Precision> precisions = {Precision::fp32};
    std::vector<std::int64_t> batch_sizes = {1, 4};
    // Generative models' prompt and output lengths (core/generation): axes of those models' cells only.
    std::vector<std::int64_t> input_tokens = {128};
    std::vector<std::int64_t> output_tokens = {128};
    std::vector<ExcludeRule> exclude;
    // backend -> option -> values; an option with several values is a sweep axis of that backend.
    std::map<std::string, std::map<std::string, std::vector<std::string>>> backend_options;
    // device -> the CPUs its workers are pinned to (core/plan/cpu_affinity); a device not listed: NVML's nearest
    // CPUs under parallel: per_device, else not pinned.
    CpuAffinityMap cpu_affinity;
    RunSettings settings;  // a swept setting holds its first value here
    // `pipeline:` (core/plan/pipeline_plan): where given, every cell is an image pipeline cell, one per point of
    // its axes (preprocess, postprocess, mode).
    PipelinePlan pipeline;
    std::vector<SettingAxis> setting_axes;  // in the order first given
    // Where each key was given, for errors that involve several keys: "plan.yaml:7:12" (its value in a
    // plan file) or the flag ("--set stop=stdrel", "--duration 10s"; the last one given); a key left at its
    // default has none.
    std::map<std::string, std::string, std::less<>> origins;
};

// The names a plan may use; model entries may also be paths to existing model files.
struct PlanVocabulary {
    std::vector<std::string> models;
    std::vector<std::string> backends;
};

// A plan is a page of settings; parsing YAML takes many times the file's size in memory, so a larger
// file, surely not a plan, is refused before it is read.
inline constexpr std::uintmax_t kMaxPlanBytes = 1024 * 1024;

// Larger batches are surely typos; the bound also keeps input buffers within what a host can hold.
inline constexpr std::int64_t kMaxBatchSize = 65536;

// A batch size as the plan, the command line and the report filters take it: a whole number from 1 to
// kMaxBatchSize; else nullopt. The one reading of a batch size's text.
std::optional<std::int64_t> parse_batch_size(std::string_view text);

// A token count as the plan and the command line take it: a whole number from 1 to kMaxGenerationTokens.
std::optional<std::int64_t> parse_token_count(std::string_view text);

inline constexpr std::string_view kAxisKeys[] = {"models",      "backends",     "devices",      "precisions",
                                                 "batch_sizes", "input_tokens", "output_tokens"};

// One combination of the swept settings' values: the plan's settings with them, and the label that says them
// ("concurrency=2 target_qps=20"; empty where nothing is swept).
struct SettingPoint {
    RunSettings settings;
    std::string label;
};

// The Cartesian product of the plan's setting axes, the first axis outermost; one point (the plan's settings,
// no label) where none is swept.
std::vector<SettingPoint> setting_points(const Plan& plan);

// Throws UserError "SOURCE:LINE:COL: what is wrong; valid choices ..." on any problem.
Plan parse_plan(std::string_view yaml_text, std::string_view source, const PlanVocabulary& vocabulary);
Plan load_plan_file(const std::string& path, const PlanVocabulary& vocabulary);

// Applies one command-line override (an axis as a comma list, or a setting), read with the same
// rules and messages as a plan file; `origin` names the flag for error messages. Throws UserError.
void apply_override(Plan& plan, std::string_view key, std::string_view value, std::string_view origin,
                    const PlanVocabulary& vocabulary);

// Checks between keys, once the plan file and every override are applied (min_iterations against
// max_iterations, the stopping criterion's settings against each other and the timeout, the model
// cache's path, settings that need a CUDA device or GPU telemetry, the scenario's settings against each
// other, the batch sizes and the loop). Throws UserError at the position of the key to change where it
// was given.
void check_plan(const Plan& plan);

// Where a check between keys points: the first of `keys` the plan gave (Plan::origins), else the plan.
std::string origin_of(const Plan& plan, std::initializer_list<std::string_view> keys);

// The plan as JSON text, stored with each run so a result can be traced to what produced it.
std::string plan_to_json(const Plan& plan);
// The plan back from that text (to resume a run): the same checks as a plan file, errors naming `origin`.
// Throws UserError.
Plan plan_from_json(std::string_view json_text, std::string_view origin, const PlanVocabulary& vocabulary);

}  // namespace inferbench
