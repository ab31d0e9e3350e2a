// The plain reference of torch-aoti: one AOTInductor package (.pt2) loaded with LibTorch's
// AOTIModelPackageLoader as a C++ program of a dozen lines would load it, without inferbench: random inputs as
// the exporter declared them, one first call, warm-up calls (at least 5, for --warmup seconds), then single calls
// (at least 20, for --duration seconds) each timed by CUDA events on the current stream (steady_clock on a CPU), as
// inferbench's plan warms up and measures a cell. Prints one JSON line in the reference's row format:
//   {"aoti": {"median_ms", "p10_ms", "p90_ms", "enqueue_median_ms", "calls"}, "aoti_first_call_s"}
// or {"aoti_error": "..."} with exit 1. Bad arguments: a usage line, exit 2.
//   aoti_reference [--warmup=S] [--duration=S] PACKAGE DEVICE NAME:DTYPE:D0xD1x... [...]      DEVICE: cuda:N or cpu
// Used by scripts/gpu/torch_paths.py; built where LibTorch has the loader (the GPU host), and here against the
// tests' fake loader.
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#if INFERBENCH_TORCH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int kWarmupCalls = 5;
constexpr int kTimedCalls = 20;
constexpr char kUsage[] =
    "usage: aoti_reference [--warmup=SECONDS] [--duration=SECONDS] PACKAGE DEVICE(cuda:N|cpu) NAME:DTYPE:D0xD1x... "
    "[...]\n";

struct Arguments {
    double warmup_s = 0.5;
    double duration_s = 1.5;
    std::vector<std::string> positional;  // PACKAGE DEVICE INPUT...
};

// nullopt: not arguments of this program (the usage line's case).
std::optional<Arguments> parse_arguments(int argc, char** argv) {
    Arguments parsed;
    for (int i = 1; i < argc; ++i) {
        const std::string text = argv[i];
        double* seconds = text.rfind("--warmup=", 0) == 0     ? &parsed.warmup_s
                          : text.rfind("--duration=", 0) == 0 ? &parsed.duration_s
                                                              : nullptr;
        if (!seconds) {
            if (text.rfind("--", 0) == 0) return std::nullopt;
            parsed.positional.push_back(text);
            continue;
        }
        const auto value = text.substr(text.find('=') + 1);
        char* end = nullptr;
        *seconds = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !(*seconds >= 0 && *seconds <= 3600)) return std::nullopt;
    }
    if (parsed.positional.size() < 3) return std::nullopt;
    return parsed;
}

struct Declared {
    std::string name;
    at::ScalarType dtype = at::kFloat;
    std::vector<std::int64_t> shape;
};

at::ScalarType dtype_named(const std::string& name) {
    if (name == "float32") return at::kFloat;
    if (name == "float16") return at::kHalf;
    if (name == "bfloat16") return at::kBFloat16;
    if (name == "int64") return at::kLong;
    if (name == "int32") return at::kInt;
    throw std::invalid_argument("dtype '" + name + "' is not one of float32, float16, bfloat16, int64, int32");
}

// NAME:DTYPE:D0xD1x...
Declared parse_input(const std::string& text) {
    const auto first = text.find(':');
    const auto second = first == std::string::npos ? first : text.find(':', first + 1);
    if (second == std::string::npos) throw std::invalid_argument("input '" + text + "' is not NAME:DTYPE:D0xD1x...");
    Declared d{text.substr(0, first), dtype_named(text.substr(first + 1, second - first - 1)), {}};
    std::stringstream dims(text.substr(second + 1));
    for (std::string dim; std::getline(dims, dim, 'x');) d.shape.push_back(std::stoll(dim));
    if (d.shape.empty()) throw std::invalid_argument("input '" + text + "' has no shape");
    return d;
}

// As the Python reference makes them: floats from randn, masks of ones, token type ids 0/1, other ids < 1000.
at::Tensor random_input(const Declared& d, const c10::Device& device) {
    const auto options = at::TensorOptions().device(device);
    if (at::isFloatingType(d.dtype)) return torch::randn(d.shape, options).to(d.dtype);
    if (d.name.find("mask") != std::string::npos) return torch::ones(d.shape, options.dtype(d.dtype));
    const std::int64_t high = d.name.find("type") != std::string::npos ? 2 : 1000;
    return torch::randint(0, high, d.shape, options.dtype(d.dtype));
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double ms_since(std::chrono::steady_clock::time_point from) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from).count();
}

// The row of a package that did not load or run: the first line of what the loader said.
void print_error(const std::string& what) {
    const nlohmann::json row = {{"aoti_error", what.substr(0, std::min<std::size_t>(what.find('\n'), 300))}};
    std::cout << row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

// Times single calls: GPU time between two events around the call on the current stream (the events made
// once, by their first record, before the timed calls), and the host's time to enqueue it; on a CPU, the call.
class CallTimer {
public:
    struct Timed {
        double gpu_ms;
        double enqueue_ms;
    };

    CallTimer(torch::inductor::AOTIModelPackageLoader& loader, const std::vector<at::Tensor>& inputs,
              const c10::Device& device)
        : loader_(loader), inputs_(inputs), device_(device) {}

    Timed operator()() {
#if INFERBENCH_TORCH_CUDA
        if (device_.is_cuda()) {
            const auto stream = c10::cuda::getCurrentCUDAStream(device_.index());
            const auto began = std::chrono::steady_clock::now();
            start_.record(stream);
            loader_.run(inputs_);
            end_.record(stream);
            const double enqueue = ms_since(began);
            end_.synchronize();
            return {static_cast<double>(start_.elapsed_time(end_)), enqueue};
        }
#endif
        const auto began = std::chrono::steady_clock::now();
        loader_.run(inputs_);
        const double total = ms_since(began);
        return {total, total};
    }

private:
    torch::inductor::AOTIModelPackageLoader& loader_;
    const std::vector<at::Tensor>& inputs_;
    c10::Device device_;
#if INFERBENCH_TORCH_CUDA
    at::cuda::CUDAEvent start_{cudaEventDefault}, end_{cudaEventDefault};
#endif
};

int run(const Arguments& arguments) {
    const std::string& package = arguments.positional[0];
    const c10::Device device(arguments.positional[1]);
    std::vector<Declared> declared;
    for (std::size_t i = 2; i < arguments.positional.size(); ++i)
        declared.push_back(parse_input(arguments.positional[i]));
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> inputs;
    for (const auto& d : declared) inputs.push_back(random_input(d, device));

    const auto began = std::chrono::steady_clock::now();
#if INFERBENCH_AOTI_DEVICE_INDEX
    torch::inductor::AOTIModelPackageLoader loader(package, "model", /*run_single_threaded=*/false,
                                                   /*num_runners=*/1, device.is_cuda() ? device.index() : -1);
#else  // a loader without a device index (LibTorch 2.6-2.7) runs on the current device
#if INFERBENCH_TORCH_CUDA
    if (device.is_cuda() && device.has_index()) c10::cuda::set_device(device.index());
#endif
    torch::inductor::AOTIModelPackageLoader loader(package, "model", /*run_single_threaded=*/false);
#endif
    CallTimer timed(loader, inputs, device);
    timed();  // the first call: the package's own set-up, and the events made
    const double first_call_s = ms_since(began) / 1e3;
    const auto warming = std::chrono::steady_clock::now();
    for (int calls = 0; calls < kWarmupCalls || ms_since(warming) < arguments.warmup_s * 1e3; ++calls) timed();
    std::vector<double> gpu, enqueue;
    const auto measuring = std::chrono::steady_clock::now();
    while (gpu.size() < static_cast<std::size_t>(kTimedCalls) || ms_since(measuring) < arguments.duration_s * 1e3) {
        const auto t = timed();
        gpu.push_back(t.gpu_ms);
        enqueue.push_back(t.enqueue_ms);
    }
    std::vector<double> sorted = gpu;
    std::sort(sorted.begin(), sorted.end());
    const nlohmann::json row = {
        {"aoti",
         {{"median_ms", median(gpu)},
          {"p10_ms", sorted[sorted.size() / 10]},  // p10 and p90 as the Python reference picks them
          {"p90_ms", sorted[9 * sorted.size() / 10]},
          {"enqueue_median_ms", median(enqueue)},
          {"calls", gpu.size()}}},
        {"aoti_first_call_s", std::round(first_call_s * 100) / 100}};
    std::cout << row.dump() << std::endl;
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const auto arguments = parse_arguments(argc, argv);
    if (!arguments) {
        std::cerr << kUsage;
        return 2;
    }
    try {
        return run(*arguments);
    } catch (const c10::Error& error) {
        print_error(error.what_without_backtrace());
    } catch (const std::exception& error) {
        print_error(error.what());
    }
    return 1;
}
