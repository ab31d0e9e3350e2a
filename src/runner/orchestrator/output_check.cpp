#include "runner/orchestrator/output_check.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/random_inputs.hpp"
#include "backends/registry.hpp"
#include "core/error.hpp"
#include "runner/orchestrator/model_path.hpp"

namespace inferbench::runner {
namespace {

struct Side {
    std::unique_ptr<Backend> backend;
    BenchmarkSpec spec;
};

Side open_side(const BackendRegistry& registry, const OutputCheckRequest& request, const OutputCheckSide& side,
               std::string_view role) {
    Side s;
    s.spec.model = request.model;
    s.spec.backend = side.backend;
    s.spec.device = side.device;
    s.spec.precision = side.precision;
    s.spec.batch_size = request.batch_size;
    s.spec.seed = request.seed;
    s.spec.model_cache_dir = request.model_cache_dir;
    s.spec.backend_options = side.backend_options;
    std::string create_problem;
    try {
        s.backend = registry.create(side.backend);
    } catch (const std::exception& e) {
        create_problem = e.what();
    }
    if (auto problem = cell_problem(s.backend.get(), create_problem, s.spec))
        throw UserError(fmt::format("{} side ({}): {}", role, s.spec.label(), *problem));
    const ResolvedModel model = resolve_model(s.spec, s.backend->capabilities());
    if (model.skip_reason) throw UserError(fmt::format("{} side ({}): {}", role, s.spec.label(), *model.skip_reason));
    if (model.failure) throw UserError(fmt::format("{} side ({}): {}", role, s.spec.label(), *model.failure));
    s.backend->load(model.model_path, s.spec);
    return s;
}

bool same_inputs(const std::vector<TensorInfo>& a, const std::vector<TensorInfo>& b) {
    return a.size() == b.size() && std::ranges::all_of(a, [&b](const TensorInfo& x) {
               return std::ranges::any_of(b, [&x](const TensorInfo& y) {
                   return y.name == x.name && y.shape == x.shape && y.dtype == x.dtype;
               });
           });
}

std::string describe(const std::vector<TensorInfo>& infos) {
    std::vector<std::string> parts;
    for (const auto& i : infos) parts.push_back(fmt::format("{} {} [{}]", i.name, to_string(i.dtype), fmt::join(i.shape, ",")));
    return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<HostTensor> run_once(Backend& backend, const std::vector<HostTensor>& inputs) {
    backend.prepare(inputs);
    DeviceTimes times;
    backend.infer(times);
    return backend.last_outputs();
}

}  // namespace

OutputCheckResult check_outputs(const OutputCheckRequest& request) {
    const auto registry = BackendRegistry::discover(BackendRegistry::default_search_dirs());
    Side reference = open_side(registry, request, request.reference, "reference");
    Side checked = open_side(registry, request, request.checked, "checked");
    OutputCheckResult result;
    result.inputs = reference.backend->inputs();
    if (!same_inputs(result.inputs, checked.backend->inputs()))
        throw UserError(fmt::format("{}: the two backends declare different inputs ({}: {}; {}: {}), so they cannot "
                                    "be fed the same tensors",
                                    request.model, request.reference.backend, describe(result.inputs),
                                    request.checked.backend, describe(checked.backend->inputs())));
    // Inputs as the model declares them (fp32 images, int64 token ids); each backend converts them to
    // its precision itself, as in a benchmark.
    result.input_tensors = make_random_inputs(result.inputs, request.seed);
    result.reference_outputs = run_once(*reference.backend, result.input_tensors);
    result.checked_outputs = run_once(*checked.backend, result.input_tensors);
    result.reference_version = fmt::format("{} {}", reference.backend->name(), reference.backend->version());
    result.checked_version = fmt::format("{} {}", checked.backend->name(), checked.backend->version());
    result.outputs = compare_outputs(result.checked_outputs, result.reference_outputs);
    return result;
}

}  // namespace inferbench::runner
