// The scripted backend (scripted_backend.hpp) as a backend module, on the real clock, for end-to-end
// tests of the scenarios. Options (backend_options.scripted):
//   latency_us: "1000 2000 500"   the inference times cycled through, microseconds, space-separated
//   per_sample_us: N              added per sample of the batch
#include <memory>
#include <sstream>

#include "runner/load/load_clock.hpp"
#include "scripted_backend.hpp"

namespace inferbench {
namespace {

class ScriptedModule final : public Backend {
public:
    std::string name() const override { return "scripted"; }
    std::string version() const override { return "test"; }
    Capabilities capabilities() const override { return prototype().capabilities(); }
    std::vector<BackendOption> options() const override {
        return {{"latency_us", "1000", "inference times cycled through, microseconds, space-separated"},
                {"per_sample_us", "0", "microseconds added per sample of the batch"}};
    }
    void load(const std::string& model_path, const BenchmarkSpec& spec) override {
        testing::Script script;
        script.latencies_ns.clear();
        std::istringstream latencies(option(spec, "latency_us", "1000"));
        for (double us = 0; latencies >> us;) script.latencies_ns.push_back(static_cast<std::int64_t>(us * 1000));
        if (script.latencies_ns.empty()) script.latencies_ns.push_back(1'000'000);
        script.per_sample_ns = static_cast<std::int64_t>(std::stod(option(spec, "per_sample_us", "0")) * 1000);
        backend_ = std::make_unique<testing::ScriptedBackend>(script, clock_);
        backend_->load(model_path, spec);
    }
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor> /*inputs*/) override {}
    void infer(DeviceTimes& times) override { backend_->infer(times); }

private:
    static std::string option(const BenchmarkSpec& spec, const char* key, const char* fallback) {
        const auto it = spec.backend_options.find(key);
        return it == spec.backend_options.end() ? std::string(fallback) : it->second;
    }
    testing::ScriptedBackend& prototype() const {
        static runner::RealClock clock;
        static testing::ScriptedBackend backend({}, clock);
        return backend;
    }

    runner::RealClock clock_;
    std::unique_ptr<testing::ScriptedBackend> backend_;
};

Backend* create() { return new ScriptedModule(); }

constexpr BackendModule kModule{kBackendApiVersion, "scripted", "test backend with scripted inference times", &create};

}  // namespace
}  // namespace inferbench

extern "C" __attribute__((visibility("default"))) const inferbench::BackendModule* inferbench_backend_module() {
    return &inferbench::kModule;
}
