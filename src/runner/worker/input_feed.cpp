#include "runner/worker/input_feed.hpp"

#include "backends/random_inputs.hpp"
#include "core/metrics/harness_metrics.hpp"

namespace inferbench::runner {

InputFeed::InputFeed(const BenchmarkSpec& spec, const std::vector<TensorInfo>& infos, Source source)
    : from_files_(source == Source::plan && !spec.inputs.empty()) {
    if (from_files_)
        samples_ = read_input_samples(spec.inputs, infos);
    else
        samples_.push_back(make_random_inputs(infos, spec.seed));
}

BetweenIterations* InputFeed::cycle_on(Backend& backend, BetweenIterations* then) {
    if (samples_.size() < 2) return then;
    backend_ = &backend;
    then_ = then;
    return this;
}

void InputFeed::run() {
    backend_->prepare(samples_[next_]);
    next_ = (next_ + 1) % samples_.size();
    if (then_ != nullptr) then_->run();
}

std::vector<BackendMetric> InputFeed::metrics() const {
    if (!from_files_) return {};
    return {{std::string(harness_metrics::kInputSamples), static_cast<double>(samples_.size()), "count"},
            {std::string(harness_metrics::kInputsCycled), cycles() ? 1.0 : 0.0, "flag"}};
}

}  // namespace inferbench::runner
