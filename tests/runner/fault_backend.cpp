// A test-only backend that fails on purpose, to check that the harness records crashes, hangs and
// errors as failed benchmarks and goes on with the plan. Options (backend_options.fault):
//   fault: none | sigkill | segfault | hang | hang_with_child | throw | exit
//   phase: load | measure    (where the fault strikes; default load)
//   fault_batch: N           (strike only in cells of this batch size; 0 = all)
//   sleep_ms: N              (each inference sleeps this long)
// With FAULT_CHECK_RENDEZVOUS=DIR in the environment, a backend's first unsupported_reason() leaves a
// file in DIR and waits (up to 10 s) for a second backend to leave one: `list backends` finishes at once
// only if it asks both at the same time.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "backends/backend.hpp"

namespace inferbench {
namespace {

class FaultBackend final : public Backend {
public:
    std::string name() const override { return "fault"; }
    std::string version() const override { return "test"; }
    Capabilities capabilities() const override {
        Capabilities caps;
        caps.devices = {DeviceKind::cpu};
        caps.precisions = {Precision::fp32};
        caps.needs_model_file = false;
        return caps;
    }
    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override {
        if (const char* dir = std::getenv("FAULT_CHECK_RENDEZVOUS"); dir && !met_) {
            met_ = true;
            const std::filesystem::path folder(dir);
            std::ofstream(folder / std::to_string(reinterpret_cast<std::uintptr_t>(this))) << "here\n";
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            const auto arrived = [&] {
                return std::distance(std::filesystem::directory_iterator(folder),
                                     std::filesystem::directory_iterator{});
            };
            while (arrived() < 2 && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return Backend::unsupported_reason(spec);
    }
    std::vector<BackendOption> options() const override {
        return {{"fault", "none", "which failure", OptionType::choice},
                {"phase", "load", "load or measure", OptionType::choice},
                {"fault_batch", "0", "batch size that fails", OptionType::count},
                {"sleep_ms", "0", "sleep per inference", OptionType::count}};
    }
    void load(const std::string& /*path*/, const BenchmarkSpec& spec) override {
        const auto option = [&](const char* key, const char* fallback) {
            auto it = spec.backend_options.find(key);
            return it == spec.backend_options.end() ? std::string(fallback) : it->second;
        };
        const long fault_batch = std::stol(option("fault_batch", "0"));
        fault_ = (fault_batch == 0 || fault_batch == spec.batch_size) ? option("fault", "none") : "none";
        in_measure_ = option("phase", "load") == "measure";
        sleep_ms_ = std::stol(option("sleep_ms", "0"));
        if (!in_measure_) strike();
    }
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor> /*inputs*/) override {}
    void infer(DeviceTimes& /*times*/) override {
        if (sleep_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
        if (in_measure_ && ++count_ == 50) strike();
    }

private:
    mutable bool met_ = false;
    void strike() {
        std::fprintf(stderr, "fault backend: striking with %s\n", fault_.c_str());
        std::fflush(stderr);
        if (fault_ == "sigkill") raise(SIGKILL);
        if (fault_ == "segfault") {
            // A real invalid write, as a framework's bug makes, not a signal sent. The pointer is read at run time,
            // so the compiler cannot turn the write into a trap.
            int* volatile nowhere = nullptr;
            *nowhere = 1;
        }
        if (fault_ == "throw") throw std::runtime_error("injected failure");
        if (fault_ == "exit") std::_Exit(7);
        if (fault_ == "hang_with_child") {
            const pid_t child = fork();
            if (child == 0) {
                while (true) pause();
            }
            std::fprintf(stderr, "fault backend: child pid %d\n", static_cast<int>(child));
            std::fflush(stderr);
        }
        if (fault_ == "hang" || fault_ == "hang_with_child") {
            while (true) pause();
        }
    }
    std::string fault_ = "none";
    bool in_measure_ = false;
    long sleep_ms_ = 0;
    long count_ = 0;
};

Backend* create() { return new FaultBackend(); }

// Built a second time with another API version, to test that such a module is refused.
#ifndef FAULT_API_VERSION
#define FAULT_API_VERSION kBackendApiVersion
#endif
const BackendModule kModule{FAULT_API_VERSION, "fault", "test backend that fails on purpose", &create};

}  // namespace
}  // namespace inferbench

extern "C" __attribute__((visibility("default"))) const inferbench::BackendModule* inferbench_backend_module() {
    return &inferbench::kModule;
}
