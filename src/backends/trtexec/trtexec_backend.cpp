#include "backends/trtexec/trtexec_backend.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "backends/batch_shape.hpp"
#include "backends/input_files.hpp"
#include "backends/onnx_dtype.hpp"
#include "backends/tensorrt/tensorrt_engine_cache.hpp"
#include "backends/tensorrt/tensorrt_typed_onnx.hpp"
#include "backends/trtexec/trtexec_command.hpp"
#include "backends/trtexec/trtexec_log.hpp"
#include "backends/trtexec/trtexec_probe.hpp"
#include "backends/trtexec/trtexec_times.hpp"
#include "backends/trtexec/trtexec_version.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/metrics/harness_metrics.hpp"
#include "core/process/subprocess.hpp"
#include "core/process/supervise.hpp"
#include "core/temp_dir.hpp"
#include "core/units.hpp"
#include "models/onnx_reader.hpp"

namespace inferbench::trtexec {
namespace {

constexpr const char* kDefaultLocation = "/usr/src/tensorrt/bin/trtexec";
constexpr const char* kNotFound =
    "trtexec not found on PATH or /usr/src/tensorrt/bin; install TensorRT or set backend_options.trtexec.trtexec";

bool is_executable(const std::filesystem::path& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

bool is_engine_file(const std::filesystem::path& path) {
    const std::string extension = path.extension().string();
    return extension == ".engine" || extension == ".plan" || extension == ".trt";
}

// The graph inputs as the trtexec command sees them: -1 for a symbolic or unknown dimension.
std::vector<OnnxInput> command_inputs(const models::onnx::OnnxGraphSignature& signature) {
    std::vector<OnnxInput> inputs;
    for (const auto& info : signature.inputs) {
        OnnxInput input{info.name, static_cast<std::int32_t>(info.elem_type), {}};
        for (const auto& dim : info.dims) {
            const auto* fixed = std::get_if<std::int64_t>(&dim);
            input.dims.push_back(fixed && *fixed > 0 ? *fixed : -1);
        }
        inputs.push_back(std::move(input));
    }
    return inputs;
}


// The model's inputs as the plan's input files must hold them: the ONNX types, the batch resolved as for the
// engine's profile (backends/batch_shape).
std::vector<TensorInfo> input_infos(const std::vector<OnnxInput>& inputs, std::int64_t batch, const std::string& model) {
    std::vector<TensorInfo> infos;
    for (const OnnxInput& input : inputs) {
        const auto dtype = dtype_of(static_cast<models::onnx::DataType>(input.elem_type));
        if (!dtype)
            throw UserError(fmt::format("trtexec: input {} of {} is of ONNX type {}, which inferbench cannot read from "
                                        "the plan's inputs; leave inputs unset for this model",
                                        input.name, model, input.elem_type));
        infos.push_back({input.name, *dtype, resolve_batch_shape(input.dims, batch, model, input.name)});
    }
    return infos;
}

// Before TensorRT 10 the ONNX parser makes an int64 network input an int32 one: --loadInputs would then read half
// of each int64 array as the whole input.
void check_int64_inputs(const std::vector<TensorInfo>& infos, const std::string& tensorrt_version) {
    const auto major = parse_int(std::string_view(tensorrt_version).substr(0, tensorrt_version.find('.')));
    if (!major || *major >= 10) return;
    for (const TensorInfo& info : infos) {
        if (info.dtype == DType::i64)
            throw UserError(fmt::format("trtexec: TensorRT {} makes the int64 input {} an int32 one, which the plan's "
                                        "int64 arrays do not fit; use TensorRT 10 or later, or leave inputs unset for "
                                        "this model",
                                        tensorrt_version, info.name));
    }
}

// Why the plan's input files cannot reach trtexec for this cell, or nothing.
std::optional<std::string> inputs_problem(const BenchmarkSpec& spec, const TrtexecOptions& options) {
    if (spec.inputs.empty()) return std::nullopt;
    if (is_engine_file(spec.model))
        return fmt::format("trtexec takes the plan's inputs for an ONNX model only: inferbench reads the input "
                           "names and sizes from it, and a ready engine ({}) does not say them; give the ONNX model, "
                           "or leave inputs unset and give --loadInputs in backend_options.trtexec.extra_args",
                           spec.model);
    if (has_flag(options.extra_args, "--loadInputs"))
        return "the plan's inputs and --loadInputs in backend_options.trtexec.extra_args both give trtexec's "
               "inputs; keep one of them";
    return std::nullopt;
}

// The version trtexec at `trtexec` prints, asked once per file (path, size and time of change, so that an update
// in place is seen) in this process: unsupported_reason() is asked for every cell of a matrix.
std::string tensorrt_version_of(const std::filesystem::path& trtexec) {
    static std::mutex mutex;
    static std::map<std::string, std::string, std::less<>> known;
    std::error_code ec;
    const auto changed = std::filesystem::last_write_time(trtexec, ec).time_since_epoch().count();
    const auto size = std::filesystem::file_size(trtexec, ec);
    const std::string key = fmt::format("{}|{}|{}", trtexec.string(), size, changed);
    const std::lock_guard lock(mutex);
    auto [entry, inserted] = known.try_emplace(key);
    if (inserted) entry->second = probe_tensorrt_version(trtexec);
    return entry->second;
}

// The request for the precision-typed file trtexec 11 builds from. trtexec has no float32 reference run to
// calibrate int8 or fp8 with, so those come from a file the user quantized (Q/DQ nodes) only.
TypedOnnxRequest typed_request(const std::string& model_path, const BenchmarkSpec& spec) {
    TypedOnnxRequest request;
    request.model = model_path;
    request.precision = spec.precision;
    request.batch_size = spec.batch_size;
    request.seed = spec.seed;
    request.model_cache_dir = spec.model_cache_dir;
    return request;
}

// Why trtexec `version_text` cannot run this cell: a TensorRT newer than known, or a TensorRT 11 that refuses a
// flag of extra_args or cannot be given the cell's precision in `model_path` (an ONNX file; empty: not known
// yet, e.g. a zoo name, then load() says it). An unknown version ("unknown") is run as before.
std::optional<std::string> version_problem(const std::string& version_text, const std::filesystem::path& trtexec,
                                           const TrtexecOptions& options, const BenchmarkSpec& spec,
                                           const std::string& model_path) {
    const auto version = parse_tensorrt_version(version_text);
    if (!version) return std::nullopt;
    if (auto newer = unknown_version_problem(*version, "trtexec at " + trtexec.string())) return newer;
    if (auto removed = removed_flags_problem(options.extra_args, *version)) return removed;
    if (precision_route(*version) != PrecisionRoute::typed_onnx || model_path.empty() || is_engine_file(model_path))
        return std::nullopt;
    if (auto problem = typed_onnx_problem(typed_request(model_path, spec), /*have_reference=*/false))
        return fmt::format("trtexec {}: {}", to_string(*version), *problem);
    return std::nullopt;
}

// The plan's model as unsupported_reason() can read it without resolving anything: an existing file, else empty.
std::string model_file(const BenchmarkSpec& spec) {
    std::error_code ec;
    return std::filesystem::is_regular_file(spec.model, ec) ? spec.model : std::string();
}

// The key of the shared TensorRT engine cache; trtexec asks no CUDA API, so the compute capability is
// not known, and the extra arguments are what else changes the engine.
EngineKey engine_key(const std::string& model_path, const BenchmarkSpec& spec, const std::string& gpu,
                     const std::string& tensorrt_version, const std::vector<std::string>& extra_args) {
    EngineKey key;
    key.model_hash = hash_file(model_path);
    key.model_size_bytes = std::filesystem::file_size(model_path);
    key.precision = spec.precision;
    key.batch_size = spec.batch_size;
    key.gpu_name = gpu;
    key.tensorrt_version = tensorrt_version;
    key.build_settings = fmt::format("builder=trtexec extra_args=[{}]", join(extra_args, " "));
    return key;
}

// A stop (Ctrl-C) reaches trtexec as SIGINT first, so that it can still write the times it measured.
StopPolicy stop_policy(const std::function<bool()>& should_stop) {
    StopPolicy policy;
    policy.should_stop = should_stop;
    policy.signals = {SIGINT, SIGTERM, SIGKILL};
    policy.grace_ns = 2'000'000'000;
    return policy;
}

// The text of a log trtexec wrote; empty when there is none.
std::string read_text_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The last `count` lines of a tool's output, for one-line failure reasons.
std::string last_lines(std::string_view text, std::size_t count) {
    text = trim(text);
    std::size_t begin = text.size();
    for (std::size_t i = 0; i < count && begin > 0; ++i) {
        const auto newline = text.rfind('\n', begin - 1);
        if (newline == std::string_view::npos) return std::string(text);
        begin = newline;
    }
    return std::string(trim(text.substr(begin)));
}

// trtexec's times count from an origin of its own that it does not print. The last query ends just
// before trtexec exits (only the report follows), so the trace is placed to end at the exit: early
// by the few milliseconds of that report, never overlapping what ran before trtexec started.
void anchor_to_exit(std::vector<IterationRecord>& records, std::int64_t exit_ns) {
    std::int64_t end = 0;
    for (const auto& record : records) end = std::max(end, record.start_ns + record.e2e_ns);
    for (auto& record : records) record.start_ns += exit_ns - end;
}

std::vector<IterationRecord> read_times(const std::filesystem::path& path, bool stopped) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        if (stopped) return {};
        throw std::runtime_error("trtexec wrote no --exportTimes file; is it older than TensorRT 7?");
    }
    try {
        return parse_trtexec_times(read_text_file(path), 0);
    } catch (const std::runtime_error&) {
        if (stopped) return {};  // killed while writing it: nothing complete to keep
        throw;
    }
}

}  // namespace

std::optional<std::filesystem::path> find_trtexec(const TrtexecOptions& options) {
    if (!options.trtexec.empty()) {
        if (is_executable(options.trtexec)) return std::filesystem::path(options.trtexec);
        return std::nullopt;
    }
    if (auto on_path = find_program("trtexec")) return on_path;
    if (is_executable(kDefaultLocation)) return std::filesystem::path(kDefaultLocation);
    return std::nullopt;
}

std::string TrtexecBackend::version() const {
    if (!tensorrt_version_.empty()) return tensorrt_version_;
    const auto found = find_trtexec({});
    return found ? tensorrt_version_of(*found) : std::string();
}

Capabilities TrtexecBackend::capabilities() const {
    Capabilities caps;
    caps.devices = {DeviceKind::cuda};
    caps.precisions = {Precision::fp32, Precision::fp16, Precision::bf16, Precision::int8, Precision::fp8};
    caps.model_formats = {"onnx", "engine", "plan", "trt"};
    caps.dynamic_batch = true;
    caps.device_timing = true;
    caps.runs_own_loop = true;
    return caps;
}

// Cheap: a matrix of many cells asks this for each, so it only looks for the file.
std::optional<std::string> TrtexecBackend::unsupported_reason(const BenchmarkSpec& spec) const {
    TrtexecOptions options;
    try {
        options = parse_trtexec_options(spec.backend_options);
    } catch (const UserError& e) {
        return e.what();
    }
    if (!find_trtexec(options)) {
        if (options.trtexec.empty()) return kNotFound;
        return fmt::format("trtexec not found at '{}' (backend_options.trtexec.trtexec)", options.trtexec);
    }
    if (auto problem = inputs_problem(spec, options)) return problem;
    if (auto problem = Backend::unsupported_reason(spec)) return problem;
    const std::filesystem::path trtexec = *find_trtexec(options);
    try {
        return version_problem(tensorrt_version_of(trtexec), trtexec, options, spec, model_file(spec));
    } catch (const std::runtime_error&) {
        return std::nullopt;  // a model that cannot be read: load() fails the cell with the reason
    }
}

void TrtexecBackend::load(const std::string& model_path, const BenchmarkSpec& spec) {
    options_ = parse_trtexec_options(spec.backend_options);
    const auto found = find_trtexec(options_);
    if (!found) throw EnvironmentError(kNotFound);
    trtexec_ = *found;
    device_ = spec.device.index;
    engine_was_cached_ = false;
    inputs_path_ = spec.inputs;
    input_infos_.clear();
    first_sample_.clear();
    input_samples_ = 0;
    if (auto problem = inputs_problem(spec, options_)) throw UserError(*problem);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(model_path, ec))
        throw std::runtime_error(fmt::format("cannot load {}: no such file", model_path));
    tensorrt_version_ = probe_tensorrt_version(trtexec_);
    if (auto problem = version_problem(tensorrt_version_, trtexec_, options_, spec, model_path))
        throw UserError(*problem);
    if (is_engine_file(model_path)) {
        // A ready engine: its precision and shapes are its own; --shapes may come through extra_args.
        engine_path_ = model_path;
        shapes_.clear();
        return;
    }
    build_engine(model_path, spec);
}

ConvertedModel TrtexecBackend::convert_model(const std::string& model_path, const BenchmarkSpec& spec) {
    ConvertedModel converted{model_path, {}, {}, 0};
    const TrtexecOptions options = parse_trtexec_options(spec.backend_options);
    const auto found = find_trtexec(options);
    if (!found || is_engine_file(model_path)) return converted;  // load() says what is missing
    const std::string version = tensorrt_version_of(*found);
    if (auto problem = version_problem(version, *found, options, spec, model_path)) {
        converted.skip_reason = *problem;
        return converted;
    }
    if (!strongly_typed_only(version)) return converted;
    TypedOnnx typed = typed_onnx_for(typed_request(model_path, spec), nullptr);
    converted.model_path = typed.path.string();
    converted.metrics = std::move(typed.metrics);
    return converted;
}

// TensorRT 11: the file that carries the precision. convert_model() made it; a file load() is given directly
// is converted here, so that nothing is ever built in another precision than the plan's.
std::string TrtexecBackend::file_to_build(const std::string& model_path, const BenchmarkSpec& spec) const {
    if (!strongly_typed_only(tensorrt_version_)) return model_path;
    const TypedOnnx typed = typed_onnx_for(typed_request(model_path, spec), nullptr);
    std::fprintf(stderr, "trtexec: TensorRT %s builds strongly typed from the %s\n", tensorrt_version_.c_str(),
                 typed.description.c_str());
    return typed.path.string();
}

void TrtexecBackend::build_engine(const std::string& model_path, const BenchmarkSpec& spec) {
    const std::string build_file = file_to_build(model_path, spec);
    const std::vector<OnnxInput> inputs = command_inputs(models::onnx::read_onnx_signature(build_file));
    const bool own_shapes = has_flag(options_.extra_args, "--minShapes") || has_flag(options_.extra_args, "--optShapes");
    shapes_ = own_shapes ? std::string() : shapes_for_batch(inputs, spec.batch_size, model_path);
    if (!inputs_path_.empty()) {
        input_infos_ = input_infos(inputs, spec.batch_size, model_path);
        check_int64_inputs(input_infos_, tensorrt_version_);
    }
    const std::string gpu = probe_gpu_name(device_);
    const std::filesystem::path cache_dir = std::filesystem::path(spec.model_cache_dir) / "trtexec-engines";
    std::filesystem::create_directories(cache_dir);
    EngineKey key = engine_key(model_path, spec, gpu, tensorrt_version_, options_.extra_args);
    // A converted file is made by this inferbench's conversion: another conversion is another engine.
    if (build_file != model_path) key.build_settings += " typed_onnx=" + hash_file(build_file);
    const EngineCachePaths paths = engine_cache_paths(cache_dir, model_path, key);
    engine_path_ = paths.engine;
    if (cached_engine_matches(paths, key)) {
        engine_was_cached_ = true;
        std::fprintf(stderr, "trtexec: reusing the cached engine %s\n", engine_path_.c_str());
        return;
    }
    // Built under a private name and renamed: a concurrent or interrupted build never leaves half an engine.
    const std::string partial = engine_path_.string() + fmt::format(".partial-{}", getpid());
    const std::string timing_cache = timing_cache_path(cache_dir, gpu, {}, tensorrt_version_).string();
    const EngineBuild build{trtexec_.string(), build_file, partial, timing_cache,      spec.precision,
                            spec.batch_size,   inputs,     device_, tensorrt_version_, options_.extra_args};
    const CommandLine command = engine_build_command(build);
    for (const auto& note : command.notes) std::fprintf(stderr, "trtexec: note: %s\n", note.c_str());
    const std::filesystem::path log_path = engine_path_.string() + ".build.log";
    const Supervised result = run_logged(command.argv, log_path, stop_policy({}));
    std::error_code ec;
    if (!result.status.success() || !std::filesystem::is_regular_file(partial, ec)) {
        std::filesystem::remove(partial, ec);
        throw std::runtime_error(fmt::format("trtexec could not build an engine from {} ({}; log {}): {}", model_path,
                                             result.status.describe(), log_path.string(),
                                             last_lines(read_text_file(log_path), 5)));
    }
    std::filesystem::rename(partial, engine_path_);
    write_engine_key(paths, key);  // after the engine: a crash between the two leaves an entry that is rebuilt
    std::fprintf(stderr, "trtexec: built %s for %s with TensorRT %s\n", engine_path_.c_str(), gpu.c_str(),
                 tensorrt_version_.c_str());
}

// Untimed: the plan's files read and checked here, as the harness's feed reads them for the backends it drives;
// trtexec makes its own random inputs otherwise, so the harness's are not used.
void TrtexecBackend::prepare(std::span<const HostTensor> /*inputs*/) {
    if (inputs_path_.empty() || input_samples_ > 0) return;
    InputSamples samples = read_input_samples(inputs_path_, input_infos_);
    input_samples_ = static_cast<std::int64_t>(samples.size());
    first_sample_ = std::move(samples.front());
    if (input_samples_ > 1)
        std::fprintf(stderr,
                     "trtexec: feeding the first of the %lld samples of %s to every iteration: trtexec's --loadInputs "
                     "takes one file per input and does not cycle\n",
                     static_cast<long long>(input_samples_), inputs_path_.c_str());
}

std::vector<BackendMetric> TrtexecBackend::prepared_metrics() const {
    if (input_samples_ == 0) return {};
    return {{std::string(harness_metrics::kInputSamples), static_cast<double>(input_samples_), "count"},
            {std::string(harness_metrics::kInputsCycled), 0.0, "flag"}};
}

// Each input's bytes as they are in memory (little-endian on every host inferbench runs on), the size of the
// input at the cell's batch: what trtexec reads with --loadInputs.
std::vector<std::pair<std::string, std::string>> TrtexecBackend::write_input_files(const std::filesystem::path& dir) const {
    std::vector<std::pair<std::string, std::string>> files;
    for (std::size_t i = 0; i < first_sample_.size(); ++i) {
        const HostTensor& tensor = first_sample_[i];
        const std::filesystem::path file = dir / fmt::format("input{}.bin", i);
        std::ofstream out(file, std::ios::binary);
        out.write(reinterpret_cast<const char*>(tensor.data.data()), static_cast<std::streamsize>(tensor.data.size()));
        if (!out.flush())
            throw EnvironmentError(fmt::format("trtexec: cannot write the input file {}", file.string()));
        files.emplace_back(tensor.info.name, file.string());
    }
    return files;
}

void TrtexecBackend::infer(DeviceTimes& /*times*/) {
    throw std::logic_error("the trtexec backend runs its own loop (run_own_loop); infer() is not called for it");
}

OwnLoopReport TrtexecBackend::run_own_loop(const LoopSettings& settings, IterationSink& sink) {
    if (engine_path_.empty()) throw std::logic_error("trtexec: run_own_loop() before load()");
    const TempDir dir("trtexec");
    const EngineRun run{trtexec_.string(), engine_path_.string(), (dir.path() / "times.json").string(),
                        settings.warmup_ns, settings.duration_ns, settings.min_iterations, shapes_, device_,
                        options_.extra_args, write_input_files(dir.path()), tensorrt_version_};
    const Supervised result = run_logged(engine_run_command(run), dir.path() / "trtexec.log",
                                         stop_policy([&sink] { return sink.stop_requested(); }));
    const std::int64_t exit_ns = monotonic_ns();
    const std::string log_text = read_text_file(dir.path() / "trtexec.log");
    const TrtexecLog log = parse_trtexec_log(log_text);
    if (!result.stopped && (!result.status.success() || log.passed == false))
        throw std::runtime_error(
            fmt::format("trtexec failed ({}): {}", result.status.describe(), last_lines(log_text, 5)));
    for (const auto& warning : log.warnings) std::fprintf(stderr, "trtexec: warning: %s\n", warning.c_str());
    std::vector<IterationRecord> records = read_times(dir.path() / "times.json", result.stopped);
    anchor_to_exit(records, exit_ns);
    for (const auto& record : records) {
        if (!sink.add(record)) break;
    }
    return {};  // trtexec's warm-up is not reported per iteration
}

std::unique_ptr<Backend> make_trtexec_backend() { return std::make_unique<TrtexecBackend>(); }

}  // namespace inferbench::trtexec
