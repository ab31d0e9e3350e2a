// A test-only backend whose inferences take known times: the i-th inference of an instance takes
// latencies_ns[i % size] + per_sample_ns x the instance's batch size, on the clock it is given (a
// VirtualClock makes that exact; RealClock spins, so the measured loop sees it within microseconds). It
// reports that time as its compute time, and logs every inference (when, which instance, its batch
// size), so a test can compute by hand what a scenario, a stopping rule or a summary must give.
// Also built as a backend module, "scripted" (scripted_backend_module.cpp), for end-to-end tests.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "runner/load/load_clock.hpp"

namespace inferbench::testing {

struct ScriptedCall {
    std::int64_t start_ns = 0;
    std::int64_t batch_size = 0;
    int instance = 0;
};

// Shared by every instance of one test: the calls in the order they began.
class ScriptedLog {
public:
    void add(const ScriptedCall& call) {
        const std::lock_guard lock(m_);
        calls_.push_back(call);
    }
    std::vector<ScriptedCall> calls() const {
        const std::lock_guard lock(m_);
        return calls_;
    }

private:
    mutable std::mutex m_;
    std::vector<ScriptedCall> calls_;
};

struct Script {
    std::vector<std::int64_t> latencies_ns = {1'000'000};
    std::int64_t per_sample_ns = 0;
};

class ScriptedBackend final : public Backend {
public:
    ScriptedBackend(Script script, runner::LoadClock& clock, std::shared_ptr<ScriptedLog> log = nullptr, int instance = 0)
        : script_(std::move(script)), clock_(clock), log_(std::move(log)), instance_(instance) {}

    std::string name() const override { return "scripted"; }
    std::string version() const override { return "test"; }
    Capabilities capabilities() const override {
        Capabilities caps;
        caps.devices = {DeviceKind::cpu, DeviceKind::cuda};
        caps.precisions = {std::begin(kAllPrecisions), std::end(kAllPrecisions)};
        caps.needs_model_file = false;
        caps.device_timing = true;
        caps.concurrent_instances = true;
        return caps;
    }
    void load(const std::string& /*model_path*/, const BenchmarkSpec& spec) override { batch_size_ = spec.batch_size; }
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor> /*inputs*/) override {}
    void infer(DeviceTimes& times) override {
        const std::int64_t start = clock_.now();
        const auto& latencies = script_.latencies_ns;
        const std::int64_t latency =
            latencies[static_cast<std::size_t>(calls_ % static_cast<std::int64_t>(latencies.size()))] +
            script_.per_sample_ns * batch_size_;
        ++calls_;
        if (log_) log_->add({start, batch_size_, instance_});
        times.compute_ns = latency;
        clock_.sleep_until(start + latency);
    }

    void set_batch_size(std::int64_t batch_size) { batch_size_ = batch_size; }
    std::int64_t calls() const { return calls_; }

private:
    Script script_;
    runner::LoadClock& clock_;
    std::shared_ptr<ScriptedLog> log_;
    int instance_ = 0;
    std::int64_t batch_size_ = 1;
    std::int64_t calls_ = 0;
};

}  // namespace inferbench::testing
