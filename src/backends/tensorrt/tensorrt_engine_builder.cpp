#include "backends/tensorrt/tensorrt_engine_builder.hpp"

#include <NvOnnxParser.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "backends/batch_shape.hpp"
#include "backends/tensorrt/tensorrt_calibrator.hpp"
#include "backends/tensorrt/tensorrt_engine_cache.hpp"
#include "backends/tensorrt/tensorrt_types.hpp"

namespace inferbench {
namespace {

// The parser owns the weights the network points to: it must live until the engine is built.
struct ParsedNetwork {
    std::unique_ptr<nvinfer1::INetworkDefinition> network;
    std::unique_ptr<nvonnxparser::IParser> parser;
};

struct NetworkInput {
    TensorInfo info;
    bool dynamic_batch = false;
};

// TensorRT 11 has no precision builder flag left (TF32 only): plan_precision never asks it for one.
std::optional<nvinfer1::BuilderFlag> to_builder_flag(BuildFlag flag) {
#if NV_TENSORRT_MAJOR >= 11
    if (flag == BuildFlag::tf32) return nvinfer1::BuilderFlag::kTF32;
    return std::nullopt;
#else
    switch (flag) {
        case BuildFlag::fp16: return nvinfer1::BuilderFlag::kFP16;
        case BuildFlag::int8: return nvinfer1::BuilderFlag::kINT8;
        case BuildFlag::fp8: return nvinfer1::BuilderFlag::kFP8;
        case BuildFlag::tf32: return nvinfer1::BuilderFlag::kTF32;
        case BuildFlag::bf16:
#if NV_TENSORRT_MAJOR >= 9
            return nvinfer1::BuilderFlag::kBF16;
#else
            return std::nullopt;  // plan_precision() never asks TensorRT 8 for bf16
#endif
    }
    return std::nullopt;
#endif
}

std::string parser_errors(const nvonnxparser::IParser& parser) {
    std::string text;
    for (int i = 0; i < parser.getNbErrors(); ++i) {
        const nvonnxparser::IParserError* error = parser.getError(i);
        text += fmt::format("{}{} (node {})", text.empty() ? "" : "; ", error->desc(), error->node());
    }
    return text.empty() ? std::string("no message from the ONNX parser") : text;
}

// The network's creation flags. TensorRT 11: none; every network is strongly typed (its precision is the ONNX
// file's types) and the kSTRONGLY_TYPED flag is deprecated and ignored (NVIDIA's 10.x-to-11.x migration guide).
ParsedNetwork parse_onnx(nvinfer1::IBuilder& builder, const std::string& model, TensorRtLogger& logger) {
#if NV_TENSORRT_MAJOR >= 10
    const nvinfer1::NetworkDefinitionCreationFlags flags = 0;  // 10.x: explicit batch is the only mode
#else
    const auto flags = 1U << static_cast<std::uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kEXPLICIT_BATCH);
#endif
    ParsedNetwork parsed;
    parsed.network.reset(builder.createNetworkV2(flags));
    if (!parsed.network) throw std::runtime_error("TensorRT cannot create a network: " + logger.take_last_error());
    parsed.parser.reset(nvonnxparser::createParser(*parsed.network, logger));
    if (!parsed.parser) throw std::runtime_error("TensorRT cannot create an ONNX parser: " + logger.take_last_error());
    if (!parsed.parser->parseFromFile(model.c_str(), static_cast<int>(nvinfer1::ILogger::Severity::kWARNING)))
        throw std::runtime_error(
            fmt::format("TensorRT's ONNX parser rejects {}: {}", model, parser_errors(*parsed.parser)));
    return parsed;
}

std::vector<NetworkInput> network_inputs(const nvinfer1::INetworkDefinition& network, const EngineBuildRequest& r) {
    std::vector<NetworkInput> inputs;
    for (std::int32_t i = 0; i < network.getNbInputs(); ++i) {
        const nvinfer1::ITensor* tensor = network.getInput(i);
        const std::string name = tensor->getName();
        const nvinfer1::Dims dims = tensor->getDimensions();
        if (dims.nbDims < 0) throw std::runtime_error(fmt::format("input {} of {} has an unknown rank", name, r.model_path));
        const auto dtype = to_dtype(tensor->getType());
        if (!dtype)
            throw std::runtime_error(fmt::format("input {} of {} has element type {}, which inferbench cannot feed", name,
                                                 r.model_path, data_type_name(tensor->getType())));
        const std::vector<std::int64_t> declared = to_shape(dims);
        inputs.push_back({TensorInfo{name, *dtype, resolve_batch_shape(declared, r.batch_size, r.model_path, name)},
                          has_dynamic_batch(declared)});
    }
    return inputs;
}

// min = opt = max = the benchmark's batch: kernels are chosen for exactly the shape that is measured.
nvinfer1::IOptimizationProfile* add_batch_profile(nvinfer1::IBuilder& builder, nvinfer1::IBuilderConfig& config,
                                                  const std::vector<NetworkInput>& inputs) {
    nvinfer1::IOptimizationProfile* profile = nullptr;  // owned by the builder
    for (const NetworkInput& input : inputs) {
        if (!input.dynamic_batch) continue;
        if (profile == nullptr) profile = builder.createOptimizationProfile();
        const nvinfer1::Dims dims = to_dims(input.info.shape);
        for (auto selector : {nvinfer1::OptProfileSelector::kMIN, nvinfer1::OptProfileSelector::kOPT,
                              nvinfer1::OptProfileSelector::kMAX}) {
            if (!profile->setDimensions(input.info.name.c_str(), selector, dims))
                throw std::runtime_error(fmt::format("TensorRT refuses the shape of input {}", input.info.name));
        }
    }
    if (profile != nullptr && config.addOptimizationProfile(profile) < 0)
        throw std::runtime_error("TensorRT refuses the batch optimisation profile");
    return profile;
}

void apply_options(nvinfer1::IBuilderConfig& config, const EngineBuildRequest& r) {
    for (BuildFlag flag : kAllBuildFlags) {
        const auto builder_flag = to_builder_flag(flag);
        if (!builder_flag && r.precision.flags.has(flag))
            throw std::logic_error(fmt::format("TensorRT {} has no builder flag for {}: plan_precision asked for one",
                                               NV_TENSORRT_MAJOR, to_string(flag)));
        if (!builder_flag) continue;
        if (r.precision.flags.has(flag)) config.setFlag(*builder_flag);
        else config.clearFlag(*builder_flag);  // TF32 is on by default: fp32 means IEEE fp32
    }
    if (r.options.workspace_mb > 0)
        config.setMemoryPoolLimit(nvinfer1::MemoryPoolType::kWORKSPACE,
                                  static_cast<std::size_t>(r.options.workspace_mb) << 20);
    config.setBuilderOptimizationLevel(r.options.builder_optimization_level);
}

std::unique_ptr<nvinfer1::ITimingCache> attach_timing_cache(nvinfer1::IBuilderConfig& config,
                                                            const std::filesystem::path& file) {
    const std::vector<char> stored = read_file(file).value_or(std::vector<char>{});
    std::unique_ptr<nvinfer1::ITimingCache> cache(config.createTimingCache(stored.data(), stored.size()));
    if (!cache || !config.setTimingCache(*cache, /*ignoreMismatch=*/false)) {
        // An unreadable or foreign cache only costs time: start an empty one.
        cache.reset(config.createTimingCache(nullptr, 0));
        if (!cache || !config.setTimingCache(*cache, false)) throw std::runtime_error("TensorRT cannot create a timing cache");
    }
    return cache;
}

// The config's cache, with the timings this build added (as trtexec saves it).
void save_timing_cache(const nvinfer1::IBuilderConfig& config, const std::filesystem::path& file) {
    const nvinfer1::ITimingCache* cache = config.getTimingCache();
    if (cache == nullptr) return;
    const std::unique_ptr<nvinfer1::IHostMemory> blob(cache->serialize());
    if (!blob) return;
    try {
        write_file_atomically(file, std::span<const char>(static_cast<const char*>(blob->data()), blob->size()));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tensorrt: warning: the timing cache is not saved: %s\n", e.what());
    }
}

#if NV_TENSORRT_MAJOR < 11
std::unique_ptr<EntropyCalibrator> make_calibrator(const EngineBuildRequest& r, const std::vector<NetworkInput>& inputs) {
    std::vector<TensorInfo> infos;
    for (const NetworkInput& input : inputs) infos.push_back(input.info);
    CalibrationData data = r.options.calibration_dir.empty()
                               ? CalibrationData::random(std::move(infos), r.seed)
                               : CalibrationData::from_dir(std::move(infos), r.options.calibration_dir);
    return std::make_unique<EntropyCalibrator>(std::move(data));
}
#endif

// "fp16+int8" (the flags of a 10.x build), or "strongly typed" (11.x: the file's own types).
std::string build_description(const PrecisionPlan& plan) {
    if (plan.route == PrecisionRoute::typed_onnx) return "strongly typed";
    return to_string(plan.flags);
}

}  // namespace

std::vector<char> build_engine(const EngineBuildRequest& r, TensorRtLogger& logger) {
    const std::unique_ptr<nvinfer1::IBuilder> builder(nvinfer1::createInferBuilder(logger));
    if (!builder) throw std::runtime_error("TensorRT cannot create a builder: " + logger.take_last_error());
    const ParsedNetwork parsed = parse_onnx(*builder, r.model_path, logger);
    const std::vector<NetworkInput> inputs = network_inputs(*parsed.network, r);

    const std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
    if (!config) throw std::runtime_error("TensorRT cannot create a builder config: " + logger.take_last_error());
    const nvinfer1::IOptimizationProfile* profile = add_batch_profile(*builder, *config, inputs);
    apply_options(*config, r);
    const auto timing_cache = attach_timing_cache(*config, r.timing_cache);
    std::string calibration;  // why calibration stopped, when it did
#if NV_TENSORRT_MAJOR < 11
    std::unique_ptr<EntropyCalibrator> calibrator;
    if (r.precision.needs_calibrator) {
        calibrator = make_calibrator(r, inputs);
        attach_calibrator(*config, *calibrator, profile);
    }
#else
    (void)profile;  // TensorRT 11: a Q/DQ file carries its scales, there is no calibration profile
    if (r.precision.needs_calibrator) throw std::logic_error("TensorRT 11 has no int8 calibrator: plan_precision asked for one");
#endif

    const std::unique_ptr<nvinfer1::IHostMemory> engine(builder->buildSerializedNetwork(*parsed.network, *config));
    if (!engine) {
#if NV_TENSORRT_MAJOR < 11
        if (calibrator && !calibrator->error().empty()) calibration = "; " + calibrator->error();
#endif
        throw std::runtime_error(fmt::format("TensorRT cannot build a {} engine for {} (batch {}): {}{}",
                                             build_description(r.precision), r.model_path, r.batch_size,
                                             logger.take_last_error(), calibration));
    }
    save_timing_cache(*config, r.timing_cache);
    const auto* bytes = static_cast<const char*>(engine->data());
    return std::vector<char>(bytes, bytes + engine->size());
}

}  // namespace inferbench
