#include "runner/worker/pipeline_cell.hpp"

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/metrics/pipeline_metrics.hpp"
#include "runner/worker/stop_rule.hpp"

namespace inferbench::runner {
namespace wp = worker_protocol;

// Where the loops take their finished batches from, and give them back once recorded.
class BatchSource {
public:
    virtual ~BatchSource() = default;
    virtual PipelineBatch& next() = 0;
    virtual void done(PipelineBatch& batch) = 0;
};

namespace {

// One batch through every stage, on the caller's thread, when the loop asks for it.
class SequentialBatches final : public BatchSource {
public:
    explicit SequentialBatches(PipelineBatches& batches) : batches_(batches), batch_(batches.make_batch()) {}
    PipelineBatch& next() override {
        batches_.preprocess(number_++, batch_);
        batches_.infer(batch_);
        batches_.postprocess(batch_);
        return batch_;
    }
    void done(PipelineBatch& /*batch*/) override {}

private:
    PipelineBatches& batches_;
    PipelineBatch batch_;
    std::int64_t number_ = 0;
};

// A queue of batches between two stages' threads: push waits while it is full, pop while it is empty; once closed
// both return at once (pop with nothing).
class BatchQueue {
public:
    explicit BatchQueue(std::size_t capacity) : capacity_(capacity) {}
    bool push(PipelineBatch* batch) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
        if (closed_) return false;
        items_.push_back(batch);
        changed_.notify_all();
        return true;
    }
    PipelineBatch* pop() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return closed_ || !items_.empty(); });
        if (closed_) return nullptr;
        PipelineBatch* batch = items_.front();
        items_.pop_front();
        changed_.notify_all();
        return batch;
    }
    void close() {
        const std::lock_guard lock(mutex_);
        closed_ = true;
        changed_.notify_all();
    }

private:
    std::size_t capacity_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<PipelineBatch*> items_;
    bool closed_ = false;
};

// Pre-processing and inference each on a thread of their own, post-processing on the caller's as it takes each
// batch: at most queue_depth batches wait between two stages, and queue_depth + 1 more can be in the stages, so
// the batches are made once (2 * queue_depth + 3) and reused.
class OverlappedBatches final : public BatchSource {
public:
    OverlappedBatches(PipelineBatches& batches, std::int64_t queue_depth)
        : batches_(batches),
          free_(static_cast<std::size_t>(2 * queue_depth + 3)),
          to_infer_(static_cast<std::size_t>(queue_depth)),
          to_post_(static_cast<std::size_t>(queue_depth)) {
        for (std::int64_t i = 0; i < 2 * queue_depth + 3; ++i) {
            owned_.push_back(std::make_unique<PipelineBatch>(batches.make_batch()));
            free_.push(owned_.back().get());
        }
        pre_ = std::thread([this] { guarded([this] { preprocess_loop(); }); });
        infer_ = std::thread([this] { guarded([this] { infer_loop(); }); });
    }
    ~OverlappedBatches() override {
        close_all();
        pre_.join();
        infer_.join();
    }
    PipelineBatch& next() override {
        PipelineBatch* batch = to_post_.pop();
        if (!batch) rethrow();
        batches_.postprocess(*batch);
        return *batch;
    }
    void done(PipelineBatch& batch) override { free_.push(&batch); }

private:
    void preprocess_loop() {
        for (std::int64_t number = 0;; ++number) {
            PipelineBatch* batch = free_.pop();
            if (!batch) return;
            batches_.preprocess(number, *batch);
            if (!to_infer_.push(batch)) return;
        }
    }
    void infer_loop() {
        while (PipelineBatch* batch = to_infer_.pop()) {
            batches_.infer(*batch);
            if (!to_post_.push(batch)) return;
        }
    }
    template <typename Loop>
    void guarded(Loop loop) {
        try {
            loop();
        } catch (...) {
            {
                const std::lock_guard lock(error_mutex_);
                if (!error_) error_ = std::current_exception();
            }
            close_all();
        }
    }
    void close_all() {
        free_.close();
        to_infer_.close();
        to_post_.close();
    }
    [[noreturn]] void rethrow() {
        const std::lock_guard lock(error_mutex_);
        if (error_) std::rethrow_exception(error_);
        throw std::logic_error("pipeline: the stage threads ended without an error");
    }

    PipelineBatches& batches_;
    std::vector<std::unique_ptr<PipelineBatch>> owned_;
    BatchQueue free_, to_infer_, to_post_;
    std::mutex error_mutex_;
    std::exception_ptr error_;
    std::thread pre_, infer_;
};

// The measured batches' stages, numbered by their iteration, sent once kStagesPerEvent are kept and at the end.
class StageOutbox {
public:
    explicit StageOutbox(const EventSender& send) : send_(send) { stages_.reserve(PipelineCell::kStagesPerEvent); }
    void add(const PipelineBatch& batch, std::int64_t iteration) {
        for (PipelineStageTime stage : batch.stages) {
            stage.iteration = iteration;
            stages_.push_back(stage);
        }
        if (stages_.size() >= PipelineCell::kStagesPerEvent) flush();
    }
    void flush() {
        if (stages_.empty()) return;
        send_(wp::PipelineStages{std::move(stages_)});
        stages_.clear();
        stages_.reserve(PipelineCell::kStagesPerEvent);
    }

private:
    const EventSender& send_;
    std::vector<PipelineStageTime> stages_;
};

template <typename Rule>
MeasureResult measure_batches(BatchSource& source, Rule rule, TraceSink sink, const std::atomic<std::int32_t>& stop,
                              bool overlapped, StageOutbox& outbox) {
    MeasureResult result;
    std::int64_t first_start = 0;
    std::int64_t last_end = 0;
    std::int64_t i = 0;
    const bool ring = sink.consumed != nullptr;
    std::int64_t room = ring ? sink.capacity : std::numeric_limits<std::int64_t>::max();
    std::int64_t slot = 0;
    std::int64_t waited_ns = 0;
    while (true) {
        if (i >= room) room = wait_for_room(sink, i, stop, waited_ns);
        if (stop.load(std::memory_order_relaxed)) {
            result.stopped = true;
            break;
        }
        PipelineBatch& batch = source.next();
        const std::int64_t start = batch.start_ns();
        const std::int64_t end = batch.end_ns();
        const DeviceTimes& d = batch.device;
        sink.records[slot] = IterationRecord{start,     end - start, d.enqueue_ns, d.h2d_ns, d.compute_ns, d.d2h_ns,
                                             overlapped ? batch.queue_ns : kNotMeasured};
        slot = ring && slot + 1 == sink.capacity ? 0 : slot + 1;
        outbox.add(batch, i);
        source.done(batch);
        if (i == 0) first_start = start;
        last_end = end;
        ++i;
        sink.published->store(i, std::memory_order_release);
        if (rule.done(i, end - waited_ns, end - start)) break;
    }
    outbox.flush();
    result.iterations = i;
    result.wall_ns = i > 0 ? last_end - first_start - waited_ns : 0;
    result.stop = rule.outcome(result.stopped);
    return result;
}

}  // namespace

std::optional<std::string> pipeline_model_problem(const BenchmarkSpec& spec) {
    if (!spec.pipeline.active()) return std::nullopt;
    if (const auto zoo = pipeline::zoo_pipeline(spec.model)) {
        if (!spec.pipeline.steps) return std::nullopt;
        return fmt::format("pipeline.steps are a user's model's; zoo model {} runs its published pipeline ({}): "
                           "give the zoo models and the steps' model in plans of their own",
                           spec.model, zoo->source);
    }
    if (std::string reason = pipeline::no_pipeline_reason(spec.model); !reason.empty()) return reason;
    if (!spec.pipeline.steps)
        return fmt::format("model {} is not a zoo model with a pipeline: give its steps in pipeline.steps (resize, "
                           "input_size, mean, std, post)",
                           spec.model);
    return std::nullopt;
}

PipelineCell::PipelineCell(Backend& backend, const BenchmarkSpec& spec, const std::string& model_path,
                           std::unique_ptr<pipeline::GpuStages> gpu)
    : batches_(backend, spec, cell_pipeline(spec, model_path), usable_images(spec), std::move(gpu)),
      threads_(spec.pipeline.threads),
      queue_depth_(spec.pipeline.queue_depth),
      overlapped_(spec.pipeline.mode == PipelineMode::overlapped) {
    skipped_ = static_cast<std::int64_t>(batches_.skipped().size());
    for (const std::string& line : batches_.skipped()) std::fprintf(stderr, "inferbench worker: image skipped: %s\n", line.c_str());
    PipelineBatch first = batches_.make_batch();
    batches_.preprocess(0, first);
    backend.prepare(first.input);
}

PipelineCell::~PipelineCell() = default;

std::vector<BackendMetric> PipelineCell::metrics() const {
    std::vector<BackendMetric> metrics = {
        {std::string(pipeline_metrics::kImages), static_cast<double>(batches_.images()), "count"},
        {std::string(pipeline_metrics::kImagesSkipped), static_cast<double>(skipped_), "count"},
        {std::string(pipeline_metrics::kThreads), static_cast<double>(threads_), "count"}};
    if (overlapped_)
        metrics.push_back({std::string(pipeline_metrics::kQueueDepth), static_cast<double>(queue_depth_), "count"});
    return metrics;
}

WarmupResult PipelineCell::warm_up(const LoopSettings& loop, const std::atomic<std::int32_t>& stop) {
    if (overlapped_) source_ = std::make_unique<OverlappedBatches>(batches_, queue_depth_);
    else source_ = std::make_unique<SequentialBatches>(batches_);
    const std::int64_t begin = monotonic_ns();
    WarmupResult result;
    while (!stop.load(std::memory_order_relaxed)) {
        result.elapsed_ns = monotonic_ns() - begin;
        if (result.elapsed_ns >= loop.warmup_ns && result.iterations >= loop.warmup_iterations) break;
        source_->done(source_->next());
        ++result.iterations;
    }
    return result;
}

MeasureResult PipelineCell::measure(const LoopSettings& loop, TraceSink sink, const std::atomic<std::int32_t>& stop,
                                    const EventSender& send) {
    if (!source_) throw std::logic_error("PipelineCell::measure() before warm_up()");
    StageOutbox outbox(send);
    const std::int64_t begin = monotonic_ns();
    MeasureResult result;
    switch (loop.stop) {
        case StopCriterion::stdrel:
            result = measure_batches(*source_, CriterionRule(loop, make_stdrel(loop), begin), sink, stop, overlapped_, outbox);
            break;
        case StopCriterion::entropy:
            result = measure_batches(*source_, CriterionRule(loop, make_entropy(loop), begin), sink, stop, overlapped_, outbox);
            break;
        case StopCriterion::fixed:
            result = measure_batches(*source_, FixedRule(loop, begin), sink, stop, overlapped_, outbox);
            break;
    }
    source_.reset();  // the stage threads end here
    return result;
}

}  // namespace inferbench::runner
