// A test-only generative backend with known step times, to test the harness's generation loop, the wire, the
// store and the reports without an engine. Its decoder is the zoo decoder the cell names (llama-tiny's shape
// otherwise); its tokens are a function of the prompts and the step, so a test can check what was stored.
// Options (backend_options.fake-decoder):
//   prefill_us: N    the prefill sleeps N microseconds per prompt token of the batch (default 2)
//   decode_us: N     each decode step sleeps N microseconds (default 200)
//   fault: none | oom | short    oom: prepare_generation fails as out of memory from batch fault_batch up;
//                                short: every generation hands over one step fewer than asked
//   fault_batch: N   (default 1)
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "backends/backend.hpp"
#include "models/decoder_models.hpp"

namespace inferbench {
namespace {

class FakeDecoderBackend final : public Backend {
public:
    std::string name() const override { return "fake-decoder"; }
    std::string version() const override { return "test"; }
    Capabilities capabilities() const override {
        Capabilities caps;
        caps.devices = {DeviceKind::cpu, DeviceKind::cuda};
        caps.precisions = {std::begin(kAllPrecisions), std::end(kAllPrecisions)};
        caps.needs_model_file = false;
        caps.generates = true;
        return caps;
    }
    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override {
        if (!spec.generation.active()) return "the fake-decoder backend runs decoder models only";
        return Backend::unsupported_reason(spec);
    }
    std::vector<BackendOption> options() const override {
        return {{"prefill_us", "2", "prefill sleep per prompt token", OptionType::count},
                {"decode_us", "200", "sleep per decode step", OptionType::count},
                {"fault", "none", "none, oom or short", OptionType::choice},
                {"fault_batch", "1", "smallest batch that runs out of memory", OptionType::count}};
    }
    void load(const std::string& /*model_path*/, const BenchmarkSpec& spec) override {
        const auto option = [&](const char* key, const char* fallback) {
            const auto it = spec.backend_options.find(key);
            return it == spec.backend_options.end() ? std::string(fallback) : it->second;
        };
        prefill_us_ = std::stol(option("prefill_us", "2"));
        decode_us_ = std::stol(option("decode_us", "200"));
        fault_ = option("fault", "none");
        fault_batch_ = std::stol(option("fault_batch", "1"));
        const models::DecoderModel* zoo = models::find_decoder_model(spec.model);
        info_.shape = (zoo ? zoo : models::find_decoder_model("llama-tiny"))->shape;
        info_.weight_bytes = parameter_count(info_.shape) * 4;
        info_.kv_dtype = DType::f32;
    }
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor> /*inputs*/) override {}
    void infer(DeviceTimes& /*times*/) override { throw std::logic_error("fake-decoder: infer() on a decoder"); }

    DecoderInfo decoder_info() const override { return info_; }
    void prepare_generation(const GenerationRequest& request) override {
        if (fault_ == "oom" && request.batch >= fault_batch_)
            throw std::runtime_error(fmt::format("out of memory: a KV cache for batch {} does not fit", request.batch));
        request_ = request;
    }
    void generate(TokenSink& sink) override {
        const auto batch = static_cast<std::size_t>(request_.batch);
        const auto input = static_cast<std::size_t>(request_.input_tokens);
        std::vector<std::int32_t> tokens(batch);
        const std::int64_t steps = request_.output_tokens - (fault_ == "short" ? 1 : 0);
        std::this_thread::sleep_for(std::chrono::microseconds(prefill_us_ * request_.batch * request_.input_tokens));
        for (std::int64_t step = 0; step < steps; ++step) {
            if (step > 0) std::this_thread::sleep_for(std::chrono::microseconds(decode_us_));
            for (std::size_t b = 0; b < batch; ++b)
                tokens[b] = static_cast<std::int32_t>(
                    (request_.prompts[b * input + input - 1] + 7 * step + static_cast<std::int64_t>(b)) % info_.shape.vocab);
            sink.step(tokens);
            if (sink.stop_requested()) return;
        }
    }

private:
    long prefill_us_ = 2, decode_us_ = 200, fault_batch_ = 1;
    std::string fault_ = "none";
    DecoderInfo info_;
    GenerationRequest request_;
};

Backend* create() { return new FakeDecoderBackend(); }
const BackendModule kModule{kBackendApiVersion, "fake-decoder", "test decoder with known step times", &create};

}  // namespace
}  // namespace inferbench

extern "C" __attribute__((visibility("default"))) const inferbench::BackendModule* inferbench_backend_module() {
    return &inferbench::kModule;
}
