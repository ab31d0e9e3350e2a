// NOT TensorRT: the fake library behind fake_sdk/NvInfer.h and NvOnnxParser.h (fake_nvinfer.hpp says what it
// records and how version 11 differs). It defines the non-virtual members the header declares on subclasses it
// owns; the ONNX parser reads the file with inferbench's own reader (its inputs and the element types it uses).
#include "fake_nvinfer.hpp"

#include <NvInfer.h>
#include <NvOnnxParser.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <variant>

#include "models/onnx_reader.hpp"
#include "models/onnx_value_types.hpp"

namespace fake_tensorrt {
namespace {

BuildRecord g_record;

}  // namespace

// BuilderFlag numbers of TensorRT 10's precision flags, which TensorRT 11 removed.
constexpr int kRemovedPrecisionFlags[] = {0 /*kFP16*/,  1 /*kINT8*/,  15 /*kFP8*/,
                                          17 /*kBF16*/, 22 /*kINT4*/, 26 /*kFP4*/};

[[maybe_unused]] bool removed_in_11(int flag) {
    for (int f : kRemovedPrecisionFlags)
        if (f == flag) return true;
    return false;
}

const BuildRecord& last_build() { return g_record; }
void reset() { g_record = {}; }

}  // namespace fake_tensorrt

namespace nvinfer1 {
namespace {

ILogger* g_logger = nullptr;

[[maybe_unused]] void log_error(const std::string& message) {
    if (g_logger != nullptr) g_logger->log(ILogger::Severity::kERROR, message.c_str());
}

class FakeHostMemory final : public IHostMemory {
public:
    explicit FakeHostMemory(std::string bytes) : bytes_(std::move(bytes)) {}
    std::string bytes_;
};

class FakeTensor final : public ITensor {
public:
    std::string name_;
    Dims dims_{};
    DataType type_ = DataType::kFLOAT;
};

class FakeNetwork final : public INetworkDefinition {
public:
    explicit FakeNetwork(NetworkDefinitionCreationFlags flags) : flags_(flags) {}
    NetworkDefinitionCreationFlags flags_;
    std::vector<std::unique_ptr<FakeTensor>> inputs_;
};

class FakeProfile final : public IOptimizationProfile {};

class FakeTimingCache final : public ITimingCache {};

class FakeConfig final : public IBuilderConfig {
public:
    std::set<int> set_;
    std::set<int> cleared_;
    bool calibrator_ = false;
    FakeTimingCache cache_;
};

class FakeBuilder final : public IBuilder {
public:
    std::vector<std::unique_ptr<FakeProfile>> profiles_;
};

DataType fake_type(inferbench::models::onnx::DataType type) {
    using inferbench::models::onnx::DataType;
    switch (type) {
        case DataType::float16:
            return nvinfer1::DataType::kHALF;
        case DataType::bfloat16:
            return nvinfer1::DataType::kBF16;
        case DataType::int8:
            return nvinfer1::DataType::kINT8;
        case DataType::int32:
            return nvinfer1::DataType::kINT32;
        case DataType::int64:
            return nvinfer1::DataType::kINT64;
        case DataType::boolean:
            return nvinfer1::DataType::kBOOL;
        case DataType::uint8:
            return nvinfer1::DataType::kUINT8;
        default:
            return nvinfer1::DataType::kFLOAT;
    }
}

class FakeParserError final : public nvonnxparser::IParserError {
public:
    std::string desc_;
    char const* desc() const override { return desc_.c_str(); }
    int node() const override { return -1; }
};

class FakeParser final : public nvonnxparser::IParser {
public:
    explicit FakeParser(FakeNetwork& network) : network_(network) {}
    bool parseFromFile(char const* file, int /*verbosity*/) noexcept override {
        try {
            const auto model = inferbench::models::onnx::read_onnx_file(file);
            fake_tensorrt::g_record.parsed_model = file;
            fake_tensorrt::g_record.model_types.clear();
            for (const auto& [name, type] : inferbench::models::onnx::infer_value_types(model))
                fake_tensorrt::g_record.model_types.emplace_back(inferbench::models::onnx::to_string(type));
            for (const auto& in : model.graph.inputs) {
                auto tensor = std::make_unique<FakeTensor>();
                tensor->name_ = in.name;
                tensor->type_ = fake_type(in.elem_type);
                tensor->dims_.nbDims = static_cast<int32_t>(in.dims.size());
                for (std::size_t i = 0; i < in.dims.size(); ++i) {
                    const auto* fixed = std::get_if<std::int64_t>(&in.dims[i]);
                    tensor->dims_.d[i] = fixed ? *fixed : -1;
                }
                network_.inputs_.push_back(std::move(tensor));
            }
            return true;
        } catch (const std::exception& e) {
            error_.desc_ = e.what();
            errors_ = 1;
            return false;
        }
    }
    int getNbErrors() const noexcept override { return errors_; }
    nvonnxparser::IParserError const* getError(int) const noexcept override { return &error_; }

private:
    FakeNetwork& network_;
    FakeParserError error_;
    int errors_ = 0;
};

std::string engine_text(const FakeNetwork& network, const FakeConfig& config) {
    std::string text = "fake TensorRT " + std::to_string(NV_TENSORRT_MAJOR) + " engine; network flags " +
                       std::to_string(network.flags_) + "; flags set";
    for (int f : config.set_) text += " " + std::to_string(f);
    return text;
}

}  // namespace

void* IHostMemory::data() const noexcept {
    return const_cast<char*>(static_cast<const FakeHostMemory*>(this)->bytes_.data());
}
std::size_t IHostMemory::size() const noexcept { return static_cast<const FakeHostMemory*>(this)->bytes_.size(); }
DataType IHostMemory::type() const noexcept { return DataType::kUINT8; }

char const* ITensor::getName() const noexcept { return static_cast<const FakeTensor*>(this)->name_.c_str(); }
Dims ITensor::getDimensions() const noexcept { return static_cast<const FakeTensor*>(this)->dims_; }
DataType ITensor::getType() const noexcept { return static_cast<const FakeTensor*>(this)->type_; }

int32_t INetworkDefinition::getNbInputs() const noexcept {
    return static_cast<int32_t>(static_cast<const FakeNetwork*>(this)->inputs_.size());
}
ITensor* INetworkDefinition::getInput(int32_t index) const noexcept {
    return static_cast<const FakeNetwork*>(this)->inputs_.at(static_cast<std::size_t>(index)).get();
}

bool IOptimizationProfile::setDimensions(char const*, OptProfileSelector, Dims const&) noexcept { return true; }

IHostMemory* ITimingCache::serialize() const noexcept { return new FakeHostMemory("fake timing cache"); }

void IBuilderConfig::setFlag(BuilderFlag flag) noexcept {
    static_cast<FakeConfig*>(this)->set_.insert(static_cast<int>(flag));
}
void IBuilderConfig::clearFlag(BuilderFlag flag) noexcept {
    static_cast<FakeConfig*>(this)->cleared_.insert(static_cast<int>(flag));
}
void IBuilderConfig::setMemoryPoolLimit(MemoryPoolType, std::size_t) noexcept {}
int32_t IBuilderConfig::addOptimizationProfile(IOptimizationProfile const*) noexcept { return 0; }
#if FAKE_TENSORRT_MAJOR < 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // the fake defines what TensorRT 10 deprecated
void IBuilderConfig::setInt8Calibrator(IInt8Calibrator* calibrator) noexcept {
    static_cast<FakeConfig*>(this)->calibrator_ = calibrator != nullptr;
}
bool IBuilderConfig::setCalibrationProfile(IOptimizationProfile const*) noexcept { return true; }
#pragma GCC diagnostic pop
#endif
void IBuilderConfig::setBuilderOptimizationLevel(int32_t) noexcept {}
ITimingCache* IBuilderConfig::createTimingCache(void const*, std::size_t) const noexcept {
    return new FakeTimingCache();
}
bool IBuilderConfig::setTimingCache(ITimingCache const&, bool) noexcept { return true; }
ITimingCache const* IBuilderConfig::getTimingCache() const noexcept {
    return &static_cast<const FakeConfig*>(this)->cache_;
}

IBuilderConfig* IBuilder::createBuilderConfig() noexcept { return new FakeConfig(); }
INetworkDefinition* IBuilder::createNetworkV2(NetworkDefinitionCreationFlags flags) noexcept {
    return new FakeNetwork(flags);
}
IOptimizationProfile* IBuilder::createOptimizationProfile() noexcept {
    auto& profiles = static_cast<FakeBuilder*>(this)->profiles_;
    profiles.push_back(std::make_unique<FakeProfile>());
    return profiles.back().get();
}

IHostMemory* IBuilder::buildSerializedNetwork(INetworkDefinition& network, IBuilderConfig& config) noexcept {
    const auto& fake_network = static_cast<const FakeNetwork&>(network);
    const auto& fake_config = static_cast<const FakeConfig&>(config);
    auto& record = fake_tensorrt::g_record;
    record.network_flags = fake_network.flags_;
    record.flags_set = fake_config.set_;
    record.flags_cleared = fake_config.cleared_;
    record.calibrator_attached = fake_config.calibrator_;
#if FAKE_TENSORRT_MAJOR >= 11
    for (int flag : fake_config.set_) {
        if (fake_tensorrt::removed_in_11(flag)) {
            log_error("BuilderFlag " + std::to_string(flag) +
                      " was removed in TensorRT 11: networks are strongly typed");
            return nullptr;
        }
    }
#endif
    record.built = true;
    return new FakeHostMemory(engine_text(fake_network, fake_config));
}

}  // namespace nvinfer1

extern "C" TENSORRTAPI void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept {
    nvinfer1::g_logger = static_cast<nvinfer1::ILogger*>(logger);
    if (version != static_cast<int32_t>(NV_TENSORRT_VERSION)) return nullptr;
    return new nvinfer1::FakeBuilder();
}

extern "C" TENSORRTAPI void* createInferRuntime_INTERNAL(void*, int32_t) noexcept { return nullptr; }

extern "C" TENSORRTAPI int32_t getInferLibVersion() noexcept { return static_cast<int32_t>(NV_TENSORRT_VERSION); }

extern "C" TENSORRTAPI void* createNvOnnxParser_INTERNAL(void* network, void*, int) noexcept {
    return static_cast<nvonnxparser::IParser*>(new nvinfer1::FakeParser(*static_cast<nvinfer1::FakeNetwork*>(network)));
}
