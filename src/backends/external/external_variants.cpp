#include "backends/external/external_variants.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace inferbench::external {
namespace {

const BackendOption kPythonOption{"python", "", "the interpreter; empty: python3 on PATH, then /usr/bin/python3",
                                  OptionType::path};
const BackendOption kThreadsOption{"threads", "0", "intra-op threads; 0: the framework's default", OptionType::count};

constexpr const char* kTransformersHint =
    "install PyTorch and transformers (pip install torch transformers; Debian has no python3-transformers)";

// The generation runner's options (runners/torch_generate.py).
std::vector<BackendOption> generate_options(bool compiled) {
    std::vector<BackendOption> options = {kPythonOption, kThreadsOption};
    if (compiled)
        options.push_back({"compile_mode", "reduce-overhead",
                           "torch.compile's mode for the forward pass (default|reduce-overhead|max-autotune|"
                           "max-autotune-no-cudagraphs); reduce-overhead replays decode steps as CUDA graphs",
                           OptionType::choice});
    return options;
}

std::vector<ExternalVariant> make_variants() {
    const std::vector<BackendOption> torch_options = {
        kPythonOption,
        kThreadsOption,
        {"channels_last", "false", "model and input in torch.channels_last memory format", OptionType::flag},
        {"cuda_graph", "false", "capture the forward pass in a CUDA graph and replay it (cuda only)", OptionType::flag},
        {"input_shape", "3,224,224", "per-sample input shape of a TorchScript file or a torchvision: model",
         OptionType::list},
        {"compile_mode", "default",
         "torch-compile: torch.compile's mode (default|reduce-overhead|max-autotune|max-autotune-no-cudagraphs)",
         OptionType::choice},
        {"precision_mode", "convert",
         "convert: weights and inputs in the precision; autocast: fp32 weights under "
         "torch.autocast",
         OptionType::choice},
        {"seq_len", "384", "tokens of a text model (the zoo's bert, hf: models), capped at its position table",
         OptionType::count},
        {"cudnn_benchmark", "true",
         "torch.backends.cudnn.benchmark: cuDNN times its algorithms for these shapes in the warm-up, as the torch "
         "backend does (false: PyTorch's default, picked by heuristics; cuda only)",
         OptionType::flag},
        {"hf_class", "", "the transformers class of an hf: model; empty: the config's architectures[0]"}};
    const std::vector<Precision> torch_precisions = {Precision::fp32, Precision::fp16, Precision::bf16};
    const std::vector<std::string> torch_formats = {"pt", "pth", "ts"};
    return {
        {"torch-eager",
         "PyTorch eager (Python runner)",
         "PyTorch",
         "install python3-torch",
         "torch_runner.py",
         {"--mode", "eager"},
         torch_precisions,
         torch_formats,
         torch_options,
         {"cuda_graph"},
         true},
        {"torch-compile",
         "PyTorch torch.compile (Python runner; PyTorch >= 2.0)",
         "PyTorch",
         "install PyTorch >= 2.0",
         "torch_runner.py",
         {"--mode", "compile"},
         torch_precisions,
         torch_formats,
         torch_options,
         {"cuda_graph"},
         true},
        {"torch-generate",
         "Hugging Face transformers' generate() with a static KV cache, PyTorch eager (Python runner; decoders)",
         "transformers",
         kTransformersHint,
         "torch_generate.py",
         {"--mode", "eager"},
         torch_precisions,
         {"hf"},
         generate_options(false),
         {},
         false,
         false,
         true},
        {"torch-generate-compile",
         "Hugging Face transformers' generate() with a static KV cache, the forward pass under torch.compile "
         "(Python runner; decoders)",
         "transformers",
         kTransformersHint,
         "torch_generate.py",
         {"--mode", "compile"},
         torch_precisions,
         {"hf"},
         generate_options(true),
         {},
         false,
         false,
         true},
        {"onnxruntime-python",
         "ONNX Runtime's Python package (Python runner)",
         "ONNX Runtime",
         "pip install onnxruntime",
         "onnxruntime_runner.py",
         {},
         {Precision::fp32},
         {"onnx", "ort"},
         {kPythonOption, kThreadsOption},
         {},
         false},
        {"tensorflow-python",
         "TensorFlow 2 (Python runner): frozen graphs, SavedModels, Keras files",
         "TensorFlow",
         "pip install tensorflow",
         "tensorflow_runner.py",
         {},
         {Precision::fp32, Precision::fp16},
         {"pb", "savedmodel", "keras", "h5"},
         {kPythonOption,
          kThreadsOption,
          {"input_names", "", "frozen graph: input tensor names, e.g. input:0", OptionType::list},
          {"output_names", "", "frozen graph: output tensor names", OptionType::list},
          {"input_shape", "", "per-sample input shape where the model leaves it open", OptionType::list}},
         {},
         false,
         false},
        {"external",
         "any program speaking the external-runner protocol (option command)",
         "the runner",
         "",
         "",
         {},
         {kAllPrecisions, kAllPrecisions + std::size(kAllPrecisions)},
         {"onnx", "pt", "pth", "ts", "pb", "savedmodel", "keras", "h5", "tflite", "engine", "plan", "xml", "gguf",
          "safetensors"},
         {{"command", "", "the runner's command line, run by /bin/sh (required)"}},
         {},
         true},
    };
}

}  // namespace

const std::vector<ExternalVariant>& all_variants() {
    static const std::vector<ExternalVariant> variants = make_variants();
    return variants;
}

const ExternalVariant& find_variant(std::string_view name) {
    const auto& variants = all_variants();
    const auto it = std::find_if(variants.begin(), variants.end(), [&](const auto& v) { return v.name == name; });
    if (it == variants.end()) throw std::logic_error(fmt::format("no external runner variant '{}'", name));
    return *it;
}

}  // namespace inferbench::external
