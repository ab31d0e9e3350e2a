#include "backends/null/null_backend.hpp"

#include "core/version.hpp"

namespace inferbench {
namespace {

class NullBackend final : public Backend {
public:
    std::string name() const override { return "null"; }
    std::string version() const override { return std::string(kVersion); }
    Capabilities capabilities() const override {
        Capabilities caps;
        caps.devices = {DeviceKind::cpu, DeviceKind::cuda};
        caps.precisions = {std::begin(kAllPrecisions), std::end(kAllPrecisions)};
        caps.needs_model_file = false;
        caps.concurrent_instances = true;
        caps.stages_inputs = true;  // nothing to copy
        return caps;
    }
    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override {
        if (spec.model != "null") return "the null backend runs only the null model";
        return Backend::unsupported_reason(spec);
    }
    void load(const std::string& /*model_path*/, const BenchmarkSpec& /*spec*/) override {}
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor> /*inputs*/) override {}
    void stage_inputs(std::span<const HostTensor> /*inputs*/) override {}
    void infer(DeviceTimes& /*times*/) override {}
    // The null model has no outputs.
    std::vector<HostTensor> last_outputs() const override { return {}; }
};

}  // namespace

std::unique_ptr<Backend> make_null_backend() { return std::make_unique<NullBackend>(); }

}  // namespace inferbench
