#include "runner/orchestrator/telemetry_recorder.hpp"

#include <fmt/format.h>

namespace inferbench::runner {

namespace {

// What a source of host-wide figures says where other devices' workers ran at the same time.
void note_shared_host(std::vector<TelemetrySource>& sources) {
    for (TelemetrySource& s : sources) {
        if (s.status != "ok") continue;
        if (s.source == "procfs")
            s.detail += "; host CPU and memory figures are the whole host's, other devices' workers included";
        else if (s.source == "rapl")
            s.detail += "; the whole host's CPU energy, other devices' workers included";
    }
}

}  // namespace

TelemetryRecorder::TelemetryRecorder(const RunSettings& settings) : settings_(settings) {}
TelemetryRecorder::TelemetryRecorder(const RunSettings& settings, TelemetryRecorder& run, std::vector<int> gpus,
                                     bool beside_others)
    : settings_(settings), run_(&run), gpus_(std::move(gpus)), beside_others_(beside_others) {}
TelemetryRecorder::~TelemetryRecorder() = default;

const telemetry::GpuAccess* TelemetryRecorder::gpu_access() {
    if (run_) return run_->gpu_access();
    if (!settings_.telemetry_enabled) return nullptr;
    if (!gpu_) {
        const auto mode = telemetry::parse_gpu_mode(settings_.telemetry_gpu).value_or(telemetry::GpuMode::automatic);
        gpu_ = telemetry::open_gpu_access(mode);
    }
    return &*gpu_;
}

void TelemetryRecorder::worker_started(int pid, std::int64_t expected_ns) {
    sampler_.reset();
    failure_.reset();
    if (!settings_.telemetry_enabled) return;
    try {
        const telemetry::GpuAccess* access = gpu_access();
        telemetry::SamplerOptions options;
        options.rate_hz = static_cast<double>(settings_.telemetry_rate_hz);
        options.expected_ns = expected_ns;
        options.gpus = gpus_;
        sampler_ = std::make_unique<telemetry::Sampler>(*access, options);
        sampler_->start(pid);
    } catch (const std::exception& e) {
        sampler_.reset();
        failure_ = fmt::format("telemetry sampler could not start: {}", e.what());
    }
}

std::optional<SamplePhase> phase_after(const worker_protocol::Event& event) {
    namespace wp = worker_protocol;
    if (std::holds_alternative<wp::Loaded>(event)) return SamplePhase::warmup;
    if (std::holds_alternative<wp::WarmupDone>(event)) return SamplePhase::measure;
    if (std::holds_alternative<wp::Measured>(event) || std::holds_alternative<wp::Error>(event) ||
        std::holds_alternative<wp::Skipped>(event))
        return SamplePhase::teardown;
    return std::nullopt;
}

void TelemetryRecorder::worker_event(const worker_protocol::Event& event) {
    if (!sampler_) return;
    if (const auto phase = phase_after(event)) sampler_->set_phase(*phase);
}

BenchmarkTelemetry TelemetryRecorder::finish(std::span<const IterationRecord> iterations) {
    BenchmarkTelemetry data;
    if (failure_) {
        for (const char* source : {"nvml", "procfs"}) data.sources.push_back({source, "unavailable", *failure_});
        failure_.reset();
    }
    if (!sampler_) return data;
    try {
        auto result = sampler_->stop();
        data.gpu = std::move(result.gpu);
        data.cpu = std::move(result.cpu);
        data.sources = std::move(result.sources);
    } catch (const std::exception& e) {
        data.sources = {{"nvml", "unavailable", e.what()}, {"procfs", "unavailable", e.what()}};
    }
    sampler_.reset();
    if (beside_others_) note_shared_host(data.sources);
    if (!iterations.empty() && !data.cpu.empty()) {
        const std::int64_t first = iterations.front().start_ns;
        const std::int64_t last = iterations.back().start_ns + iterations.back().e2e_ns;
        // Only where the iterations are on the samples' clock (a runner in another process could use
        // another): measuring must have begun while sampling ran.
        if (first >= data.cpu.front().t_ns && first <= data.cpu.back().t_ns)
            telemetry::align_phases(data.gpu, data.cpu, first, last);
    }
    return data;
}

}  // namespace inferbench::runner
