// NOT TensorRT. What the fake TensorRT library of the tests (fake_nvinfer.cpp, built for the major version
// FAKE_TENSORRT_MAJOR of fake_sdk/NvInfer.h) records of a build, for the tests to check: the network's creation
// flags, the builder flags set and cleared, the types of the ONNX file it parsed. Its "engine" is this record as
// text. TensorRT 11's behaviour, from NVIDIA's 10.x-to-11.x migration guide: a precision builder flag (kFP16,
// kINT8, kFP8, kBF16, kINT4, kFP4 as their 10.x numbers) makes the build fail with an error, strong typing is
// always on (kSTRONGLY_TYPED accepted and ignored), getInferLibVersion() reports 11.0.0.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace fake_tensorrt {

struct BuildRecord {
    unsigned network_flags = 0;
    std::set<int> flags_set;
    std::set<int> flags_cleared;
    std::string parsed_model;
    std::vector<std::string> model_types;  // ONNX element types of the parsed file's values ("float16", ...)
    bool calibrator_attached = false;
    bool built = false;
};

// The record of the last build of this process.
const BuildRecord& last_build();
void reset();

}  // namespace fake_tensorrt
