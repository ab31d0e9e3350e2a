// NOT TensorRT. A fake NvOnnxParser.h declaring only the parts of TensorRT 10's and 11's ONNX parser API that
// inferbench's tensorrt backend calls, with their real names and signatures (the same in both).
#pragma once

#include "NvInfer.h"

#define NV_ONNX_PARSER_MAJOR NV_TENSORRT_MAJOR
#define NV_ONNX_PARSER_MINOR NV_TENSORRT_MINOR
#define NV_ONNX_PARSER_PATCH NV_TENSORRT_PATCH
#define NV_ONNX_PARSER_VERSION ((NV_ONNX_PARSER_MAJOR * 10000) + (NV_ONNX_PARSER_MINOR * 100) + NV_ONNX_PARSER_PATCH)

extern "C" TENSORRTAPI void* createNvOnnxParser_INTERNAL(void* network, void* logger, int version) noexcept;

namespace nvonnxparser {

class IParserError {
public:
    virtual char const* desc() const = 0;
    virtual int node() const = 0;

protected:
    virtual ~IParserError() {}
};

class IParser {
public:
    virtual bool parseFromFile(char const* onnxModelFile, int verbosity) noexcept = 0;
    virtual int getNbErrors() const noexcept = 0;
    virtual IParserError const* getError(int index) const noexcept = 0;
    virtual ~IParser() noexcept = default;
};

namespace {

inline IParser* createParser(nvinfer1::INetworkDefinition& network, nvinfer1::ILogger& logger) noexcept {
    return static_cast<IParser*>(createNvOnnxParser_INTERNAL(&network, &logger, NV_ONNX_PARSER_VERSION));
}

}  // namespace

}  // namespace nvonnxparser
