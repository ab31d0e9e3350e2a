#include "runner/orchestrator/orchestrator.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <iterator>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "backends/openai/openai_backend.hpp"
#include "core/clock.hpp"
#include "core/cpu_list.hpp"
#include "core/metrics/harness_metrics.hpp"
#include "core/error.hpp"
#include "core/plan/matrix.hpp"
#include "core/metrics/model_metrics.hpp"
#include "core/process/process_identity.hpp"
#include "core/plan/spec_json.hpp"
#include "core/text_checks.hpp"
#include "core/units.hpp"
#include "core/version.hpp"
#include "models/decoder_models.hpp"
#include "models/inference_cost.hpp"
#include "runner/orchestrator/environment.hpp"
#include "runner/orchestrator/interrupt.hpp"
#include "runner/orchestrator/lanes.hpp"
#include "runner/orchestrator/model_path.hpp"
#include "runner/orchestrator/process.hpp"
#include "runner/orchestrator/run_estimate.hpp"
#include "runner/orchestrator/resume.hpp"
#include "runner/orchestrator/shard_order.hpp"
#include "runner/orchestrator/telemetry_recorder.hpp"
#include "runner/orchestrator/thermal_conditions.hpp"
#include "runner/worker/pipeline_cell.hpp"
#include "runner/wire/trace_buffer.hpp"
#include "runner/orchestrator/trace_drain.hpp"
#include "runner/wire/worker_protocol.hpp"
#include "store/sqlite.hpp"

namespace inferbench::runner {
namespace {

// A store that failed is tried once more after a pause: a full disk may get space back meanwhile
// (a checkpoint, another program's temporary files).
constexpr int kStoreAttempts = 2;
constexpr std::chrono::milliseconds kStoreRetryPause{1000};

// Upper bound of records kept when max_iterations is 0 (no limit) by a loop that is not drained as it
// runs (a load scenario's, a backend's own): pages are only allocated when written, so the bound costs
// address space, not memory.
constexpr std::int64_t kUnlimitedCapacity = 100'000'000;
// The ring of the harness's single_stream loop, drained into a spool file as it fills: 14 MiB shared by
// the worker and the orchestrator, whatever the loop's length.
constexpr std::int64_t kRingRecords = 256 * 1024;
// Telemetry memory is reserved for warm-up + duration + this (load, teardown).
constexpr std::int64_t kLoadAndTeardownNs = 30'000'000'000;

std::int64_t unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// One backend instance per name, for capability questions; nullopt-like entry keeps the problem.
class CapabilityCache {
public:
    explicit CapabilityCache(const BackendRegistry& registry) : registry_(registry) {}
    Backend* get(const std::string& name, std::string& problem) {
        auto it = backends_.find(name);
        if (it == backends_.end()) {
            Entry entry;
            try {
                entry.backend = registry_.create(name);
            } catch (const std::exception& e) {
                entry.problem = e.what();
            }
            it = backends_.emplace(name, std::move(entry)).first;
        }
        problem = it->second.problem;
        return it->second.backend.get();
    }

private:
    struct Entry {
        std::unique_ptr<Backend> backend;
        std::string problem;
    };
    const BackendRegistry& registry_;
    std::map<std::string, Entry> backends_;
};

void check_backend_options(const Plan& plan, CapabilityCache& cache) {
    for (const auto& [name, options] : plan.backend_options) {
        std::string problem;
        const Backend* backend = cache.get(name, problem);
        if (!backend) continue;  // its cells are skipped with the problem
        const auto known = backend->options();
        std::vector<std::string> valid;
        for (const auto& option : known) valid.push_back(option.name);
        // A serving backend's arg_NAME options are the plan's values for its server's command.
        const bool server_args = backend->capabilities().serves_endpoint;
        for (const auto& [key, value] : options) {
            if (server_args && key.starts_with(kServerArgPrefix)) continue;
            if (std::find(valid.begin(), valid.end(), key) == valid.end()) {
                throw UserError(fmt::format("{}: backend_options.{}.{}: unknown option{}; valid options: {}",
                                            plan.source, name, key, did_you_mean(key, valid),
                                            valid.empty() ? "none"
                                                          : join(valid, ", ") + fmt::format(" (`inferbench list "
                                                                                            "backends --options {}` "
                                                                                            "says what each does)",
                                                                                            name)));
            }
        }
    }
}

store::BenchmarkRecord base_record(std::int64_t run_id, CellRepeat benchmark, const BenchmarkSpec& spec) {
    store::BenchmarkRecord record;
    record.run_id = run_id;
    record.ordinal = static_cast<std::int64_t>(benchmark.ordinal);
    record.repeat = benchmark.repeat;
    // Until its worker says otherwise (a measured loop that never ended did not converge).
    record.convergence = spec.loop.stop == StopCriterion::fixed ? Convergence::fixed : Convergence::not_converged;
    record.model = spec.model;
    record.backend = spec.backend;
    record.device = to_string(spec.device);
    record.precision = std::string(to_string(spec.precision));
    record.batch_size = spec.batch_size;
    record.variant = spec.variant;
    record.input_tokens = spec.generation.input_tokens;
    record.output_tokens = spec.generation.output_tokens;
    record.settings_json = spec_to_json(spec).dump();
    record.started_unix_ms = unix_ms();
    return record;
}

// The model's parameters, MACs, FLOPs and bytes per inference at the cell's batch size, for ONNX
// models (the zoo's and users'). A model the cost model cannot read gets no figures, and the
// benchmark runs regardless: the backend is the judge of whether the file is usable.
class ModelCostCache {
public:
    std::vector<store::Metric> metrics(const std::string& model_path, std::int64_t batch_size, Precision precision) {
        if (std::filesystem::path(model_path).extension() != ".onnx") return {};
        const auto key = std::make_pair(model_path, batch_size);
        auto it = cache_.find(key);
        if (it == cache_.end()) it = cache_.emplace(key, compute(model_path, batch_size)).first;
        std::vector<store::Metric> metrics = it->second;
        // The file holds fp32 tensors; the backend moves them at the benchmark's precision.
        for (auto& metric : metrics)
            if (metric.name == model_metrics::kBytesPerInference) metric.value *= model_metrics::bytes_scale(precision);
        return metrics;
    }

private:
    static std::vector<store::Metric> compute(const std::string& model_path, std::int64_t batch_size) {
        try {
            const auto cost = models::inference_cost(model_path, batch_size);
            return {{std::string(model_metrics::kParameters), static_cast<double>(cost.parameters), "count"},
                    {std::string(model_metrics::kMacsPerInference), cost.macs, "MAC"},
                    {std::string(model_metrics::kFlopsPerInference), cost.flops, "FLOP"},
                    {std::string(model_metrics::kBytesPerInference), cost.bytes, "B"},
                    {std::string(model_metrics::kCostUnknownNodes), static_cast<double>(cost.unknown_nodes), "count"},
                    {std::string(model_metrics::kCostDataDependentNodes), static_cast<double>(cost.data_dependent_nodes),
                     "count"}};
        } catch (const std::exception&) {
            return {};
        }
    }
    std::map<std::pair<std::string, std::int64_t>, std::vector<store::Metric>> cache_;
};

// Last line of the worker's output, for the one-line reason.
std::string last_line(const std::string& text) {
    const auto newline = text.find_last_of('\n');
    return newline == std::string::npos ? text : text.substr(newline + 1);
}

namespace wp = worker_protocol;

std::string_view phase_reached(const WorkerOutcome& outcome) {
    if (!outcome.find_event<wp::Loaded>()) return "load";
    if (!outcome.find_event<wp::WarmupDone>()) return "warm-up";
    if (!outcome.find_event<wp::Measured>()) return "measurement";
    if (!outcome.find_event<wp::Layers>()) return "the layer profile or teardown, after the measurement";
    return "teardown, after every figure had arrived";
}

void fill_from_outcome(store::BenchmarkRecord& record, const WorkerOutcome& outcome) {
    record.stderr_tail = outcome.output_tail;
    if (const auto* loaded = outcome.find_event<wp::Loaded>()) {
        record.load_ns = loaded->load_ns;
        record.backend_version = loaded->backend_version;
    }
    if (const auto* warmup = outcome.find_event<wp::WarmupDone>(); warmup && warmup->iterations >= 0)
        record.warmup_iterations = warmup->iterations;
    const auto* measured = outcome.find_event<wp::Measured>();
    if (measured) {
        record.measured_wall_ns = measured->wall_ns;
        record.convergence = measured->convergence;
        record.stop_reason = measured->stop_reason;
    }
    const auto* error = outcome.find_event<wp::Error>();
    const bool clean_exit = outcome.exited && outcome.exit_code == 0 && !outcome.timed_out;
    if (const auto* skipped = outcome.find_event<wp::Skipped>(); clean_exit && skipped) {
        record.status = BenchmarkStatus::skipped;
        record.reason = skipped->reason;
    } else if (clean_exit && measured) {
        // The loop says whether a stop cut it short. A stop that came later (during the layer profile, or as
        // the worker exited) leaves the measurement whole.
        record.status = measured->stopped ? BenchmarkStatus::interrupted : BenchmarkStatus::ok;
        if (measured->stopped)
            record.reason = fmt::format("stopped by {}; iterations measured so far are kept", interrupt_name());
    } else if (error) {
        record.status = BenchmarkStatus::failed;
        record.reason = fmt::format("{} failed: {}", error->phase, error->message);
    } else if (outcome.stop_requested && termination_requested()) {
        record.status = BenchmarkStatus::interrupted;
        record.reason = fmt::format("stopped by {}: the worker was killed (during {}); iterations measured so far are kept",
                                    interrupt_name(), phase_reached(outcome));
    } else {
        record.status = outcome.stop_requested ? BenchmarkStatus::interrupted : BenchmarkStatus::failed;
        record.reason = fmt::format("{} (during {})", outcome.describe_ending(), phase_reached(outcome));
        if (auto line = last_line(outcome.output_tail); !line.empty()) record.reason += "; last output: " + line;
    }
}

// What the worker measured besides the loop: while converting the cell's model (the Loaded event's
// metrics), while profiling its layers (the Layers event's), and what a scenario measured beside its
// queries (the Measured event's).
std::vector<store::Metric> worker_metrics(const WorkerOutcome& outcome) {
    std::vector<store::Metric> metrics;
    const auto add = [&](const std::vector<BackendMetric>& from) {
        for (const BackendMetric& m : from) metrics.push_back({m.name, m.value, m.unit});
    };
    if (const auto* loaded = outcome.find_event<wp::Loaded>()) add(loaded->metrics);
    if (const auto* measured = outcome.find_event<wp::Measured>()) add(measured->metrics);
    if (const auto* layers = outcome.find_event<wp::Layers>()) add(layers->metrics);
    return metrics;
}

// The scenario's series (find_peak's steps), from the Measured event.
std::vector<store::Series> worker_series(const WorkerOutcome& outcome) {
    const auto* measured = outcome.find_event<wp::Measured>();
    return measured ? measured->series : std::vector<store::Series>{};
}

// The per-layer times of the worker's Layers event (a backend's separate profiled run), in its order.
std::vector<LayerTime> layer_times(const WorkerOutcome& outcome) {
    const auto* event = outcome.find_event<wp::Layers>();
    return event ? event->layers : std::vector<LayerTime>{};
}

// A cell's measured iterations: in memory (a loop read once it ended), or in a spool file (a drained one).
struct CellIterations {
    std::vector<IterationRecord> in_memory;
    std::shared_ptr<const store::IterationSpool> spooled;

    std::int64_t size() const {
        return spooled ? spooled->size() : static_cast<std::int64_t>(in_memory.size());
    }

    // The first and last records, all that the telemetry's phases are aligned on.
    std::vector<IterationRecord> first_and_last() const {
        if (!spooled) return in_memory.empty() ? in_memory : std::vector{in_memory.front(), in_memory.back()};
        const auto first = spooled->front();
        const auto last = spooled->back();
        return first && last ? std::vector{*first, *last} : std::vector<IterationRecord>{};
    }
};

// What measuring a cell gives: its record, its iterations, and the worker's layer times, figures and series.
struct MeasuredCell {
    store::BenchmarkRecord record;
    CellIterations iterations;
    std::vector<LayerTime> layers;
    std::vector<store::Metric> worker_figures;
    std::vector<store::Series> series;
    std::vector<GenerationRecord> generations = {};
    std::vector<std::int32_t> generated_tokens = {};
    std::vector<ServedRequest> served = {};  // a serving cell's requests, warm-up and failed ones included
    std::optional<ServingFacts> serving_facts = {};
    std::optional<TelemetrySource> pinning = {};  // where the worker ran, stored with the telemetry's sources
};

// What a serving cell sent, as the store keeps it: its workload, the server and the SLOs its requests are judged by.
std::optional<store::ServingWorkloadRecord> serving_record(const BenchmarkSpec& spec,
                                                           const std::optional<ServingFacts>& facts) {
    if (!facts) return std::nullopt;
    return store::ServingWorkloadRecord{facts->workload_fingerprint, facts->workload_json,
                                        read_serving_options(spec).slos, facts->endpoint, facts->server_command,
                                        facts->server_version, facts->model_name};
}

// The per_device lanes' NVML where telemetry has none open (it is off): only to ask where each GPU sits.
std::shared_ptr<telemetry::Nvml> placement_nvml(const telemetry::GpuAccess* access) {
    if (access && access->nvml) return access->nvml;
    try {
        return telemetry::Nvml::open();
    } catch (const std::exception&) {
        return nullptr;  // the lanes run unpinned, each saying why
    }
}

// One lane of the run (runner/orchestrator/lanes): its benchmarks, run one at a time on a thread of its own under
// parallel: per_device, with its own telemetry and cooldown; the whole run in one lane otherwise.
struct LaneRun {
    Lane lane;
    std::string name;  // the device under per_device, shown by the progress; empty otherwise
    std::unique_ptr<TelemetryRecorder> own_telemetry;
    std::unique_ptr<ThermalConditions> own_thermal;
    TelemetryRecorder* telemetry = nullptr;
    ThermalConditions* thermal = nullptr;
    // Guarded by PlanRunner::state_mutex_.
    std::size_t next = 0;            // of lane.positions: the running one, or the next to run
    bool running = false;
    std::int64_t cell_begin_ns = 0;  // of the benchmark running
};

class PlanRunner {
public:
    PlanRunner(const Plan& plan, const BackendRegistry& registry, store::ResultsStore& results,
               const RunnerOptions& options)
        : plan_(plan), results_(results), options_(options), cache_(registry), cells_(expand_matrix(plan, models::is_decoder_model)) {}

    // A new run of every cell, or (with a target) the target's cells into its run.
    RunResult run(const ResumeTarget* target) {
        check_backend_options(plan_, cache_);
        per_device_ = plan_.settings.parallel == kParallelPerDevice;
        if (target) {
            for (const CellRepeat& benchmark : target->pending)
                if (benchmark.ordinal >= cells_.size()) throw std::logic_error("resume: a cell beyond the plan");
            order_ = target->pending;
            plan_lanes();  // a placement the plan gets wrong is refused before the run is reopened
            // A second resume that read the run as interrupted before this one reopened it is refused here,
            // with the words and exit code of a resume that found it running.
            if (const auto held = results_.reopen_run(target->run_id, current_process_identity()))
                require_not_being_written(*held);
            result_.run_id = target->run_id;
            run_ = run_record();
            run_.run_id = target->run_id;
        } else {
            order_ = planned_order(plan_, cells_);
            plan_lanes();
            run_ = run_record();
            result_.run_id = results_.begin_run(run_);
        }
        begin_ns_ = monotonic_ns();
        run_lanes();
        end_run();
        return result_;
    }

private:
    // The lanes and where their workers run, decided before anything is stored.
    void plan_lanes() {
        std::vector<Lane> lanes = per_device_ ? split_into_lanes(cells_, order_)
                                              : std::vector<Lane>{Lane{Device{}, {}}};
        if (!per_device_)
            for (std::size_t k = 0; k < order_.size(); ++k) lanes.front().positions.push_back(k);
        std::vector<Device> devices;
        for (const Lane& lane : lanes) devices.push_back(lane.device);
        if (!per_device_) devices = plan_.devices;
        lane_devices_ = devices;
        // The plan's own CPU lists checked now; NVML's answers once the run's environment is read (run_lanes).
        placements_ = worker_placements(plan_, devices, per_device_, nullptr, allowed_cpus());
        for (Lane& lane : lanes) {
            auto run = std::make_unique<LaneRun>();
            run->lane = std::move(lane);
            if (per_device_) {
                run->name = to_string(run->lane.device);
                std::vector<int> gpus;
                if (run->lane.device.kind == DeviceKind::cuda) gpus.push_back(run->lane.device.index);
                run->own_telemetry = std::make_unique<TelemetryRecorder>(plan_.settings, telemetry_, std::move(gpus),
                                                                         lanes.size() > 1);
                run->own_thermal = std::make_unique<ThermalConditions>(plan_.settings, *run->own_telemetry);
            }
            run->telemetry = run->own_telemetry ? run->own_telemetry.get() : &telemetry_;
            run->thermal = run->own_thermal ? run->own_thermal.get() : &thermal_;
            lanes_.push_back(std::move(run));
        }
    }

    // Every lane to its end: the one lane on this thread; under per_device each on a thread of its own, which
    // lives as long as its workers do (they die with the thread that started them).
    void run_lanes() {
        if (per_device_) {
            const std::shared_ptr<telemetry::Nvml> nvml = placement_nvml(telemetry_.gpu_access());
            placements_ = worker_placements(plan_, lane_devices_, per_device_, nvml.get(), allowed_cpus());
        }
        for (auto& lane : lanes_)
            if (lane->own_thermal) lane->own_thermal->use_baseline(idle_baseline_);
        if (lanes_.size() == 1) return run_lane(*lanes_.front());
        std::vector<std::exception_ptr> failures(lanes_.size());
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < lanes_.size(); ++i) {
            threads.emplace_back([this, i, &failures] {
                try {
                    run_lane(*lanes_[i]);
                } catch (...) {
                    failures[i] = std::current_exception();
                    stop_.store(true);
                }
            });
        }
        for (auto& thread : threads) thread.join();
        for (const auto& failure : failures)
            if (failure) std::rethrow_exception(failure);
    }

    // The lane's benchmarks one at a time, until its last, or until a stop (Ctrl-C, a store failure, another
    // lane's interrupted benchmark) comes before its next one.
    void run_lane(LaneRun& lane) {
        while (!stop_.load()) {
            {
                const std::lock_guard lock(state_mutex_);
                if (lane.next >= lane.lane.positions.size()) return;
                if (interrupt_requested()) {
                    result_.interrupted = true;
                    stop_.store(true);
                    return;
                }
            }
            run_cell(lane);
        }
    }

    // The run as it begins: its environment, and the GPUs' idle baseline measured after it (listing the
    // GPUs opens and shuts down NVML of its own) and before the first cell.
    store::RunRecord run_record() {
        auto env = capture_environment();
        idle_baseline_ = thermal_.measure_baseline(cells_);
        store::RunRecord run;
        run.name = plan_.settings.name;
        run.started_unix_ms = unix_ms();
        run.plan_json = plan_to_json(plan_);
        run.host = env.value("host", "");
        if (idle_baseline_) env["idle_baseline"] = to_json(*idle_baseline_);
        run.environment_json = env.dump();
        run.git_commit = std::string(kGitCommit);
        run.inferbench_version = std::string(kVersion);
        run.orchestrator = current_process_identity();
        run.shard = plan_.settings.shard;
        return run;
    }

    // `write` with a second attempt; false (with result_.store_failure set) where both failed. Called with
    // store_mutex_ held: the store is one connection.
    template <typename Write>
    bool try_store(Write write) {
        for (int attempt = 1;; ++attempt) {
            try {
                write();
                return true;
            } catch (const EnvironmentError& error) {
                if (attempt == kStoreAttempts || interrupt_requested()) {
                    const auto* db_error = dynamic_cast<const store::DatabaseError*>(&error);
                    const std::lock_guard lock(state_mutex_);
                    if (!result_.store_failure) {
                        result_.store_failure.emplace();
                        result_.store_failure->reason =
                            fmt::format("{}{}", db_error && db_error->disk_full() ? "disk full: " : "", error.what());
                    }
                    stop_.store(true);
                    return false;
                }
                std::this_thread::sleep_for(kStoreRetryPause);
            }
        }
    }

    // Stored (replacing a resumed cell's earlier record), or kept in result_.unstored; either way in
    // result_.benchmarks. Returns the record as kept.
    store::BenchmarkRecord keep(store::MeasuredBenchmark measured) {
        bool stored = false;
        {
            const std::lock_guard lock(store_mutex_);
            stored = try_store(
                [&] { measured.record.benchmark_id = results_.replace_benchmark(measured.record, measured.data()); });
        }
        store::BenchmarkRecord kept = measured.record;
        if (!stored && measured.spooled_iterations) {
            // Summarized from memory once the plan stops: the spool's records come in (a failed store only).
            for (const auto& record : measured.spooled_iterations->read_all()) measured.iterations.push_back(record);
            measured.spooled_iterations.reset();
        }
        const std::lock_guard lock(state_mutex_);
        result_.benchmarks.push_back(kept);
        if (!stored) result_.unstored.push_back(std::move(measured));
        return kept;
    }

    void end_run() {
        const RunStatus status = result_.store_failure ? RunStatus::failed
                                 : result_.interrupted ? RunStatus::interrupted
                                                       : RunStatus::completed;
        const std::string reason = result_.store_failure ? result_.store_failure->reason
                                   : result_.interrupted ? fmt::format("stopped by {}", interrupt_name())
                                                         : std::string();
        const bool marked = try_store([&] { results_.end_run(result_.run_id, unix_ms(), status, reason); });
        if (!result_.store_failure) return;
        result_.store_failure->run_marked_failed = marked;
        if (!result_.unstored.empty())
            result_.store_failure->recovery = store::write_recovery_file(results_.path(), run_, result_.unstored);
    }

    // Called with state_mutex_ held; the progress display is told one event at a time.
    void notify(ProgressEvent event, const LaneRun& lane) {
        if (!options_.on_progress) return;
        event.total = order_.size();
        event.repeats = plan_.settings.repeats;
        event.elapsed_ns = monotonic_ns() - begin_ns_;
        event.eta_ns = estimate_remaining();
        event.lane = lane.name;
        event.lane_index = lane.next + (event.kind == ProgressEvent::Kind::finished ? 0 : 1);
        event.lane_total = lane.lane.positions.size();
        if (per_device_) event.index = finished_count_ + (event.kind == ProgressEvent::Kind::finished ? 0 : 1);
        options_.on_progress(event);
    }

    // What the run has left: each lane's benchmarks not finished, estimated from the cells finished so far
    // (runner/orchestrator/run_estimate), the running one less its time so far; the longest lane's, lanes running
    // at once. Called with state_mutex_ held.
    std::int64_t estimate_remaining() const {
        std::int64_t longest = 0;
        for (const auto& lane : lanes_) {
            std::int64_t left = 0;
            const auto& positions = lane->lane.positions;
            std::size_t from = lane->next;
            if (lane->running && from < positions.size()) {
                const std::int64_t current = estimate_cell_ns(cells_[order_[positions[from]].ordinal], finished_);
                left += std::max<std::int64_t>(current - (monotonic_ns() - lane->cell_begin_ns), 0);
                ++from;
            }
            for (std::size_t i = from; i < positions.size(); ++i)
                left += estimate_cell_ns(cells_[order_[positions[i]].ordinal], finished_);
            longest = std::max(longest, left);
        }
        return longest;
    }

    // The lane's next benchmark: the cell of ordinal order_[k].ordinal in the plan, one of its repeats.
    void run_cell(LaneRun& lane) {
        std::size_t k = 0;
        {
            const std::lock_guard lock(state_mutex_);
            k = lane.lane.positions[lane.next];
            lane.running = true;
            lane.cell_begin_ns = monotonic_ns();
        }
        const BenchmarkSpec& spec = cells_[order_[k].ordinal];
        const std::int64_t repeat = order_[k].repeat;
        const std::int64_t cell_begin = monotonic_ns();
        {
            const std::lock_guard lock(state_mutex_);
            notify({ProgressEvent::Kind::started, k + 1, 0, &spec, repeat}, lane);
        }
        store::BenchmarkRecord record = base_record(result_.run_id, order_[k], spec);
        // One benchmark at a time overlaps none: only lanes are logged.
        const std::optional<std::size_t> span =
            per_device_ ? std::optional(concurrency_.begin(record.ordinal, repeat, record.device, monotonic_ns()))
                        : std::nullopt;
        MeasuredCell cell = measure_cell(spec, std::move(record), k, lane);
        cell.record.ended_unix_ms = unix_ms();
        if (span)
            cell.record.concurrent =
                concurrency_.end(*span, monotonic_ns(), cell.record.status == BenchmarkStatus::skipped);
        BenchmarkTelemetry telemetry = lane.telemetry->finish(cell.iterations.first_and_last());
        if (cell.pinning) telemetry.sources.push_back(*cell.pinning);
        // A decoder's cost per step is the generation's (analysis/generation_bounds), not one pass of its ONNX graph.
        std::vector<store::Metric> metrics;
        if (!spec.generation.active()) {
            const std::lock_guard lock(prepare_mutex_);
            metrics = model_costs_.metrics(cell.record.model_path, spec.batch_size, spec.precision);
        }
        metrics.insert(metrics.end(), cell.worker_figures.begin(), cell.worker_figures.end());
        const std::int64_t queries = cell.iterations.size();
        const store::BenchmarkRecord kept =
            keep({std::move(cell.record), std::move(cell.iterations.in_memory), std::move(metrics),
                  std::move(telemetry.gpu), std::move(telemetry.cpu), std::move(telemetry.sources), std::move(cell.layers),
                  std::move(cell.series), std::move(cell.iterations.spooled), std::move(cell.generations),
                  std::move(cell.generated_tokens), std::move(cell.served), serving_record(spec, cell.serving_facts)});
        const std::lock_guard lock(state_mutex_);
        // A stop asked for once the lane's last benchmark has ended (while it is stored) cuts nothing short.
        const bool last = lane.next + 1 == lane.lane.positions.size();
        if (kept.status == BenchmarkStatus::interrupted || (interrupt_requested() && !last)) {
            result_.interrupted = true;
            stop_.store(true);
        }
        if (kept.status != BenchmarkStatus::skipped)
            finished_.push_back({&spec, monotonic_ns() - cell_begin, kept.measured_wall_ns.value_or(0), queries});
        ++finished_count_;
        lane.running = false;
        ++lane.next;
        notify({ProgressEvent::Kind::finished, k + 1, 0, &spec, repeat, 1, &kept}, lane);
    }

    // The cell's backend, its model file and whether it is skipped, decided one lane at a time: the backends'
    // cache and the model files (exports, decoders written once) are shared by the lanes.
    struct Prepared {
        const Backend* backend = nullptr;
        std::optional<std::string> skip;
        ResolvedModel model;
    };
    Prepared prepare(const BenchmarkSpec& spec) {
        const std::lock_guard lock(prepare_mutex_);
        Prepared prepared;
        std::string problem;
        prepared.backend = cache_.get(spec.backend, problem);
        prepared.skip = cell_problem(prepared.backend, problem, spec);
        if (!prepared.skip) prepared.skip = pipeline_model_problem(spec);
        if (!prepared.skip) {
            prepared.model = resolve_model(spec, prepared.backend->capabilities());
            prepared.skip = prepared.model.skip_reason;
        }
        return prepared;
    }

    // The k-th benchmark measured, from its base record; an exception fails it and keeps what was filled in before.
    MeasuredCell measure_cell(const BenchmarkSpec& spec, store::BenchmarkRecord record, std::size_t k, LaneRun& lane) {
        MeasuredCell cell{std::move(record), {}, {}, {}, {}};
        try {
            const Prepared prepared = prepare(spec);
            const Backend* backend = prepared.backend;
            const ResolvedModel& model = prepared.model;
            if (prepared.skip) {
                cell.record.status = BenchmarkStatus::skipped;
                cell.record.reason = *prepared.skip;
                cell.record.stderr_tail = model.output_tail;
                return cell;
            }
            if (model.failure) {  // making the model's file failed (a PyTorch model spec's export)
                cell.record.status = BenchmarkStatus::failed;
                cell.record.reason = *model.failure;
                cell.record.stderr_tail = model.output_tail;
                return cell;
            }
            const std::vector<store::Metric> cooldown = lane.thermal->before_cell(spec);
            cell.record.model_path = model.model_path;
            if (std::error_code ec; std::filesystem::is_regular_file(model.model_path, ec))
                cell.record.model_size_bytes =
                    static_cast<std::int64_t>(std::filesystem::file_size(model.model_path, ec));
            // The harness's single_stream loop is drained as it runs; the others' records are read once it ends.
            const bool drained =
                spec.scenario.scenario == Scenario::single_stream && !backend->capabilities().runs_own_loop;
            TraceBuffer trace = drained ? TraceBuffer::create_ring(kRingRecords)
                                        : TraceBuffer::create(spec.loop.max_iterations > 0 ? spec.loop.max_iterations
                                                                                           : kUnlimitedCapacity);
            std::shared_ptr<store::IterationSpool> spool;
            std::optional<TraceDrain> drain;
            if (drained) drain.emplace(trace, *(spool = std::make_shared<store::IterationSpool>()));
            const WorkerPlacement placement = placement_of(spec.device);
            cell.record.cpu_affinity = format_cpu_list(placement.cpus);
            if (per_device_ || !placement.cpus.empty()) cell.pinning = pinning_source(placement);
            WorkerOutcome outcome = run_cell_worker(spec, model.model_path, trace, k, lane, placement);
            std::optional<std::string> drain_failure;
            if (drain) {
                drain_failure = drain->finish();
                cell.iterations.spooled = std::move(spool);
            } else {
                const auto published = trace.published();
                cell.iterations.in_memory.assign(published.begin(), published.end());
            }
            fill_from_outcome(cell.record, outcome);
            if (drain_failure) {  // the worker was stopped for it: not the user's stop
                cell.record.status = BenchmarkStatus::failed;
                cell.record.reason = fmt::format("measuring stopped after {} iterations, which are kept: {}",
                                                 cell.iterations.spooled->size(), *drain_failure);
            }
            cell.layers = layer_times(outcome);
            cell.worker_figures = worker_metrics(outcome);
            cell.worker_figures.insert(cell.worker_figures.end(), cooldown.begin(), cooldown.end());
            if (placement.memory_node)
                cell.worker_figures.push_back({std::string(harness_metrics::kMemoryNode),
                                               static_cast<double>(*placement.memory_node), "node"});
            cell.series = worker_series(outcome);
            for (wp::Event& event : outcome.events) {
                if (auto* served = std::get_if<wp::Served>(&event)) {
                    if (served->facts) cell.serving_facts = std::move(served->facts);
                    std::move(served->requests.begin(), served->requests.end(), std::back_inserter(cell.served));
                    continue;
                }
                if (auto* stages = std::get_if<wp::PipelineStages>(&event)) {
                    auto& kept = cell.record.pipeline_stages;
                    kept.insert(kept.end(), stages->stages.begin(), stages->stages.end());
                    continue;
                }
                const auto* generated = std::get_if<wp::Generated>(&event);
                if (!generated) continue;
                cell.generations.insert(cell.generations.end(), generated->generations.begin(),
                                        generated->generations.end());
                if (cell.generated_tokens.empty()) cell.generated_tokens = generated->first_tokens;
            }
        } catch (const std::exception& e) {
            cell.record.status = BenchmarkStatus::failed;
            cell.record.reason = e.what();
        }
        return cell;
    }

    WorkerPlacement placement_of(const Device& device) const {
        const auto it = placements_.find(device);
        return it == placements_.end() ? WorkerPlacement{} : it->second;
    }

    // The cell's worker, run to its end under the orchestrator's hooks: stops, telemetry and progress ticks.
    WorkerOutcome run_cell_worker(const BenchmarkSpec& spec, const std::string& model_path, TraceBuffer& trace,
                                  std::size_t k, LaneRun& lane, const WorkerPlacement& placement) {
        const WorkerLaunch launch{options_.worker_executable,
                                  {std::string(wp::kWorkerCommand)},
                                  wp::to_json(wp::Request{spec, model_path}).dump(),
                                  trace.fd(),
                                  spec.timeout_ns,
                                  placement.cpus,
                                  placement.memory_node};
        SuperviseHooks hooks;
        hooks.interrupted = interrupt_requested;
        hooks.end_now = termination_requested;
        hooks.request_stop = [&trace] { trace.header().stop_requested.store(1, std::memory_order_relaxed); };
        hooks.on_started = [&](int pid) {
            lane.telemetry->worker_started(pid, spec.loop.warmup_ns + measured_time_ns(spec.scenario, planned_measure_ns(spec.loop)) +
                                                    kLoadAndTeardownNs);
        };
        hooks.on_event = [&](const wp::Event& event) { lane.telemetry->worker_event(event); };
        hooks.on_tick = [&] {
            ProgressEvent tick{ProgressEvent::Kind::tick, k + 1, 0, &spec, order_[k].repeat};
            tick.iterations_so_far = trace.header().published.load(std::memory_order_acquire);
            const std::lock_guard lock(state_mutex_);
            notify(tick, lane);
        };
        return run_worker(launch, hooks);
    }

    const Plan& plan_;
    store::ResultsStore& results_;
    const RunnerOptions& options_;
    CapabilityCache cache_;      // guarded by prepare_mutex_
    ModelCostCache model_costs_;  // guarded by prepare_mutex_
    TelemetryRecorder telemetry_{plan_.settings};  // the run's: its GPU access, and the one lane's when sequential
    ThermalConditions thermal_{plan_.settings, telemetry_};
    std::optional<IdleBaseline> idle_baseline_;  // measured before the first cell, stored with the run
    std::vector<BenchmarkSpec> cells_;
    std::vector<CellRepeat> order_;      // the benchmarks this invocation runs, in order
    bool per_device_ = false;
    std::vector<std::unique_ptr<LaneRun>> lanes_;
    std::vector<Device> lane_devices_;
    std::map<Device, WorkerPlacement> placements_;
    ConcurrencyLog concurrency_;
    store::RunRecord run_;               // as begun (or resumed), for a recovery file
    std::int64_t begin_ns_ = 0;
    std::atomic<bool> stop_{false};      // a lane asks the others to start no other benchmark
    std::mutex store_mutex_;             // the store is one connection
    std::mutex prepare_mutex_;
    std::mutex state_mutex_;             // what follows, the lanes' progress and the progress display
    RunResult result_;
    std::vector<FinishedCell> finished_;  // for the progress's estimate
    std::size_t finished_count_ = 0;
};

}  // namespace

void check_backend_options(const Plan& plan, const BackendRegistry& registry) {
    CapabilityCache cache(registry);
    check_backend_options(plan, cache);
}

std::vector<std::optional<std::string>> planned_skips(const std::vector<BenchmarkSpec>& cells,
                                                      const BackendRegistry& registry) {
    CapabilityCache cache(registry);
    std::vector<std::optional<std::string>> skips;
    for (const BenchmarkSpec& spec : cells) {
        std::string problem;
        const Backend* backend = cache.get(spec.backend, problem);
        std::optional<std::string> skip = cell_problem(backend, problem, spec);
        skips.push_back(skip ? skip : pipeline_model_problem(spec));
    }
    return skips;
}

int RunResult::count(BenchmarkStatus status) const {
    int n = 0;
    for (const auto& b : benchmarks) n += b.status == status ? 1 : 0;
    return n;
}

RunResult run_plan(const Plan& plan, const BackendRegistry& registry, store::ResultsStore& results,
                   const RunnerOptions& options) {
    return PlanRunner(plan, registry, results, options).run(nullptr);
}

RunResult resume_plan(const Plan& plan, const BackendRegistry& registry, store::ResultsStore& results,
                      const RunnerOptions& options, const ResumeTarget& target) {
    return PlanRunner(plan, registry, results, options).run(&target);
}

}  // namespace inferbench::runner
