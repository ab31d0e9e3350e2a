// The Backend interface. In the spirit of MLPerf LoadGen, the harness owns warm-up, iteration,
// host timing and statistics; a backend only loads a model, stages inputs and runs one inference,
// reporting the device-side times it can measure.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/plan/loop_settings.hpp"
#include "core/spec.hpp"

namespace inferbench {

enum class DType { f32, f16, bf16, f64, i8, u8, i32, i64, boolean };

std::string_view to_string(DType t);
// The inverse of to_string ("float16" -> f16); nothing for a name no DType has.
std::optional<DType> parse_dtype(std::string_view text);
std::size_t size_of(DType t);

// A tensor's name, element type and fully resolved shape (batch substituted).
struct TensorInfo {
    std::string name;
    DType dtype = DType::f32;
    std::vector<std::int64_t> shape;

    // Checked (core/tensor_size): a UserError naming the input and its shape where the count overflows or
    // the bytes exceed kMaxTensorBytes, never a wrapped size.
    std::int64_t element_count() const;
    std::size_t byte_size() const;
};

struct HostTensor {
    TensorInfo info;
    std::vector<std::byte> data;
};

// A tensor in a GPU's memory that the caller owns (a pipeline's pre-processed batch, or a backend's output
// buffer it keeps until its next infer()): data points at info.byte_size() bytes on CUDA device `device`.
struct DeviceTensor {
    TensorInfo info;
    void* data = nullptr;
    int device = 0;
};

struct Capabilities {
    std::vector<DeviceKind> devices;
    std::vector<Precision> precisions;
    std::vector<std::string> model_formats;  // file extensions without the dot: "onnx", "pt"
    bool needs_model_file = true;
    // Given a zoo name or a PyTorch model spec (core/plan/model_spec: torchvision:, timm:, hf:, python:) as the
    // model path, it builds the network itself; other backends get files (a spec exported by torch_export.py).
    bool builds_zoo_models = false;
    bool dynamic_batch = true;
    bool cuda_graphs = false;
    bool device_timing = false;  // fills DeviceTimes
    bool runs_own_loop = false;  // an external tool runs the iterations: see Backend::run_own_loop
    // Several instances can be loaded in one process and run at once, each infer() from its own thread
    // (each with its own stream on a GPU): what streams > 1 and the batcher need (core/plan/scenario_settings).
    bool concurrent_instances = false;
    // Runs decoder language models' generation (Backend::generate): a generative cell (core/generation) needs it,
    // any other cell needs infer().
    bool generates = false;
    // Measures a server through its HTTP API (the openai backend): the worker sends the cell's requests
    // (runner/worker/serving_cell) and never calls load() or infer().
    bool serves_endpoint = false;
    // Takes new inputs before every infer() at little cost (stage_inputs) and hands its outputs back
    // (last_outputs): what a pipeline cell (core/pipeline) needs, since each batch is made of new images.
    bool stages_inputs = false;
};

// A generative cell's work, given to prepare_generation() untimed: the prompts (batch x input_tokens ids,
// row-major: core/generation's generation_prompts) and how many tokens each sequence generates.
struct GenerationRequest {
    std::int64_t batch = 1;
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    std::vector<std::int32_t> prompts;
    Sampling sampling = Sampling::greedy;
    std::uint64_t seed = 0;  // seeded sampling's
};

// What a loaded decoder is, for the KV cache's size and the bounds (analysis/generation_bounds).
struct DecoderInfo {
    DecoderShape shape;
    std::string architecture = "llama";  // as the model file names it
    std::int64_t weight_bytes = 0;       // the weights as this engine holds them (a quantized file's bytes)
    DType kv_dtype = DType::f32;         // the KV cache's element type
};

// Where a backend hands each step's tokens as soon as they are in host memory; the harness takes the time.
class TokenSink {
public:
    virtual ~TokenSink() = default;
    // One token per sequence (batch of them): step 0 after the prefill, then one call per decode step.
    virtual void step(std::span<const std::int32_t> tokens) = 0;
    // The same for a step that ran in another process (a Python runner), which timed its end itself:
    // end_ns on CLOCK_MONOTONIC (Python's time.monotonic_ns()).
    virtual void step_ended_at(std::int64_t end_ns, std::span<const std::int32_t> tokens) = 0;
    // Ctrl-C or the cell's time is up: the backend may end the generation early.
    virtual bool stop_requested() const = 0;
};

// Where a backend that runs its own loop delivers its per-iteration records, as it gets them.
class IterationSink {
public:
    virtual ~IterationSink() = default;
    // Returns false once the sink is full; further records are dropped.
    virtual bool add(const IterationRecord& record) = 0;
    // Ctrl-C: the backend should stop its tool and return what it measured.
    virtual bool stop_requested() const = 0;
};

// What an option's value is, as `list backends --options` says it: text, a file or folder path, a
// boolean (true|false, yes|no, on|off, 1|0), a whole number, a real number, one of the words its help
// lists, or a comma-separated list.
enum class OptionType { text, path, flag, count, number, choice, list };
std::string_view to_string(OptionType type);

// An option a backend accepts under the plan's `backend_options.<backend>:` map.
struct BackendOption {
    std::string name;
    std::string default_value;
    std::string help;
    OptionType type = OptionType::text;
    bool operator==(const BackendOption&) const = default;
};

// A figure a backend measured besides the loop, stored with the benchmark (benchmark_metrics): e.g. an
// int8 model's agreement with float32 on its calibration inputs.
struct BackendMetric {
    std::string name;
    double value = 0;
    std::string unit;
};

// What a backend that runs its own loop says about its warm-up (not measured: both -1); figures measured
// around the loop (e.g. torch.compile's first call) come through measured_metrics().
struct OwnLoopReport {
    std::int64_t warmup_iterations = -1;
    std::int64_t warmup_ns = -1;
};

// The model file load() is given, and what was measured while making it; or, where the backend found
// that it cannot run the converted model here (no kernels for its types), why the cell is skipped.
struct ConvertedModel {
    std::string model_path;
    std::vector<BackendMetric> metrics;
    std::string skip_reason;  // non-empty: skip the cell
    // Time spent making the file that is part of loading the model (an ahead-of-time compile, which a
    // framework that compiles in load() would spend there: torch-aoti's package), added to the stored
    // load time; 0 for a conversion that is not (onnxruntime's fp16 and int8 files).
    std::int64_t load_ns = 0;
};

class Backend {
public:
    virtual ~Backend() = default;

    virtual std::string name() const = 0;
    // The framework's own version ("1.30.0"); stored with every benchmark.
    virtual std::string version() const = 0;
    virtual Capabilities capabilities() const = 0;
    virtual std::vector<BackendOption> options() const { return {}; }

    // Why this cell cannot run with this backend, or nothing. The default answers from capabilities().
    virtual std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const;

    // Turns the cell's model into the file load() runs, where the backend makes that file itself
    // (onnxruntime's float16 and int8 QDQ models, from cache or converted); called before load() and not
    // timed. The default runs the model as it is.
    virtual ConvertedModel convert_model(const std::string& model_path, const BenchmarkSpec& spec);

    // Loads (and compiles, where the framework does) the model. Timed by the harness.
    virtual void load(const std::string& model_path, const BenchmarkSpec& spec) = 0;
    // The inputs the loaded model declares, with the batch dimension resolved to spec.batch_size.
    virtual std::vector<TensorInfo> inputs() const = 0;
    // Copies (or binds) the inputs once, untimed; infer() reuses them.
    virtual void prepare(std::span<const HostTensor> inputs) = 0;
    // One inference, inputs in host memory to outputs in host memory.
    virtual void infer(DeviceTimes& times) = 0;

    // A pipeline cell's new inputs for the next infer() (same names, types and shapes as prepare()'s), given
    // before every batch and timed as part of its infer stage: a backend whose capabilities say stages_inputs
    // makes this cheap (a copy into buffers it already holds). The default calls prepare().
    virtual void stage_inputs(std::span<const HostTensor> inputs) { prepare(inputs); }
    // The same from GPU memory (a pipeline's GPU pre-processing), so that the batch never goes through the
    // host. Returns false where the backend cannot take them (the default): the caller copies them to the host
    // itself, timed, and calls stage_inputs().
    virtual bool stage_device_inputs(std::span<const DeviceTensor> /*inputs*/) { return false; }
    // The last infer()'s outputs where they are in GPU memory, in the model's output order, valid until the
    // next infer(); empty (the default) where they are not: the caller then reads last_outputs().
    virtual std::vector<DeviceTensor> last_device_outputs() const { return {}; }

    // For backends whose capabilities say runs_own_loop (trtexec, external runners): run warm-up and
    // measurement in the external tool under `settings` (the cell's loop settings, max_iterations the
    // sink's capacity) and deliver every measured iteration to `sink`, start_ns mapped onto CLOCK_MONOTONIC. The default throws: in-process backends don't.
    virtual OwnLoopReport run_own_loop(const LoopSettings& settings, IterationSink& sink);

    // Per-layer times, where the backend's options ask for them (onnxruntime's layer_profile): called
    // once after the measured loop, never during it, it runs its own separate profiled iterations and
    // returns one row per node in the order the nodes first ran. `stop` is the harness's Ctrl-C flag
    // (nonzero: stop early). Empty when not asked for; the default returns nothing.
    virtual std::vector<LayerTime> profile_layers(const std::atomic<std::int32_t>& stop);
    // Figures the backend measured besides the iterations, asked for once after the measured loop and the
    // layer profile, stored with the benchmark: a profiled run's own time per run beside the backend's CUDA
    // events over the same runs (core/metrics/profile_metrics), a runner's pre- and post-processing times
    // (core/metrics/host_stage_metrics). The default returns nothing.
    virtual std::vector<BackendMetric> measured_metrics() const { return {}; }

    // Figures learned while loading and preparing (e.g. that a CUDA graph could not be captured and the
    // model runs without one), stored with the benchmark beside convert_model()'s. Called once, after
    // prepare(); the default has none.
    virtual std::vector<BackendMetric> prepared_metrics() const { return {}; }

    // The outputs of the last prepare() or infer(), in host memory, in the model's output order, each
    // with its name, element type and shape: what `models check` compares between two backends. The
    // default throws UserError: a backend that cannot hand its outputs back says so.
    virtual std::vector<HostTensor> last_outputs() const;

    // Generative models (Capabilities::generates). After load(): the decoder's shape and cache type. Then
    // prepare_generation() once, untimed (prompts into device memory, the KV cache allocated for
    // input_tokens + output_tokens); then generate() once per warm-up and measured generation: the prefill of
    // every prompt, then decode steps, each step's tokens handed to `sink` as soon as they are on the host,
    // until every sequence has output_tokens (end-of-sequence ignored), from an empty cache each time. The
    // defaults throw UserError.
    virtual DecoderInfo decoder_info() const;
    virtual void prepare_generation(const GenerationRequest& request);
    virtual void generate(TokenSink& sink);
};

// Shared-library backend modules export one C function returning this descriptor. The version changes
// with the Backend class's layout (2: profile_layers, 3: last_outputs, 4: convert_model, 5: ConvertedModel's
// load_ns, prepared_metrics, measured_metrics and run_own_loop's report; 6: the spec's measure conditions,
// stopping criterion and scenario, Capabilities::concurrent_instances; 7: BackendOption::type; 8: generation:
// Capabilities::generates, decoder_info, prepare_generation, generate, the spec's GenerationSettings; 9:
// Capabilities::serves_endpoint; 10: pipelines: the spec's PipelineSettings, Capabilities::stages_inputs,
// stage_inputs, stage_device_inputs, last_device_outputs), so a module built against another is refused.
inline constexpr int kBackendApiVersion = 10;

struct BackendModule {
    int api_version;
    const char* name;
    const char* description;
    Backend* (*create)();
};

}  // namespace inferbench

extern "C" {
using inferbench_backend_module_fn = const inferbench::BackendModule* (*)();
}
#define INFERBENCH_BACKEND_ENTRY_POINT "inferbench_backend_module"
