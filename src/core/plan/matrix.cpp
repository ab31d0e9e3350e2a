#include "core/plan/matrix.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/plan/settings.hpp"

namespace inferbench {
namespace {

struct OptionVariant {
    OptionMap options;
    std::string label;  // the swept options only
};

// The Cartesian product of one backend's option lists; options with one value are in every variant.
std::vector<OptionVariant> option_variants(const Plan& plan, const std::string& backend) {
    std::vector<OptionVariant> variants(1);
    const auto it = plan.backend_options.find(backend);
    if (it == plan.backend_options.end()) return variants;
    for (const auto& [key, values] : it->second) {
        std::vector<OptionVariant> next;
        for (const auto& variant : variants) {
            for (const auto& value : values) {
                OptionVariant v = variant;
                v.options[key] = value;
                if (values.size() > 1) v.label += (v.label.empty() ? "" : " ") + key + "=" + value;
                next.push_back(std::move(v));
            }
        }
        variants = std::move(next);
    }
    return variants;
}

// Cells before exclude rules, counted without building them (a runaway plan would not fit in memory).
double cells_before_exclusions(const Plan& plan) {
    double variants = 0;
    for (const auto& backend : plan.backends) {
        double product = 1;
        if (const auto it = plan.backend_options.find(backend); it != plan.backend_options.end())
            for (const auto& [key, values] : it->second) product *= static_cast<double>(values.size());
        variants += product;
    }
    for (const std::size_t size : {plan.models.size(), plan.devices.size(), plan.precisions.size(),
                                   plan.batch_sizes.size()})
        variants *= static_cast<double>(size);
    // As if every model were generative: the bound is on the largest the plan could make.
    variants *= static_cast<double>(std::max<std::size_t>(plan.input_tokens.size() * plan.output_tokens.size(), 1));
    for (const SettingAxis& axis : plan.setting_axes) variants *= static_cast<double>(axis.values.size());
    for (const auto& [key, values] : plan.pipeline.axes) variants *= static_cast<double>(values.size());
    return variants;
}

BenchmarkSpec spec_with_settings(const RunSettings& s) {
    BenchmarkSpec spec;
    spec.loop = s.loop;
    spec.scenario = s.scenario;
    spec.timeout_ns = s.timeout_ns;
    spec.seed = static_cast<std::uint64_t>(s.seed);
    spec.model_cache_dir = resolved_model_cache(s);
    // Absolute: the worker need not run where the plan was read.
    if (!s.inputs.empty()) spec.inputs = std::filesystem::absolute(s.inputs).lexically_normal().string();
    return spec;
}

// The plan's measure conditions as a cell on `device` runs them: the L2 flush and the sync mode
// concern CUDA devices only, so a CPU cell stores them off.
MeasureConditions conditions_for(const RunSettings& s, Device device) {
    MeasureConditions c;
    c.throttle_threshold = s.throttle_threshold;
    c.throttle_policy = parse_throttle_policy(s.throttle_policy).value_or(c.throttle_policy);
    if (device.kind != DeviceKind::cuda) return c;
    c.l2_flush = s.l2_flush;
    c.sync = parse_sync_mode(s.sync).value_or(c.sync);
    return c;
}

// A cell's variant: the swept backend options, then the swept settings ("threads=2 concurrency=4").
std::string variant_label(const std::string& options, const std::string& settings) {
    if (options.empty() || settings.empty()) return options + settings;
    return options + " " + settings;
}

// A model's token lengths: every pair of the plan's for a generative model, the one inactive setting else.
std::vector<GenerationSettings> generation_points(const Plan& plan, bool generative) {
    const Sampling sampling = parse_sampling(plan.settings.sampling).value_or(Sampling::greedy);
    if (!generative) return {GenerationSettings{}};
    std::vector<GenerationSettings> points;
    for (const std::int64_t input : plan.input_tokens)
        for (const std::int64_t output : plan.output_tokens) points.push_back({input, output, sampling});
    return points;
}

// A server batches the requests it is sent itself: the openai backend's cells are one request per query, their
// load the concurrency or the rate, so they take batch size 1 whatever the plan's batch sizes are.
std::vector<std::int64_t> batch_sizes_of(const Plan& plan, const std::string& backend) {
    if (backend == kServingBackend) return {1};
    return plan.batch_sizes;
}

// The plan's pipeline cells' settings, a folder made absolute: the worker need not run where the plan was read.
std::vector<PipelineSettings> pipeline_cells(const Plan& plan) {
    std::vector<PipelineSettings> cells = pipeline_points(plan.pipeline);
    for (PipelineSettings& cell : cells)
        if (cell.active() && cell.images != kSyntheticImages)
            cell.images = std::filesystem::absolute(cell.images).lexically_normal().string();
    return cells;
}

}  // namespace

std::vector<BenchmarkSpec> expand_matrix(const Plan& plan, const GenerativeModelTest& is_generative) {
    if (const double count = cells_before_exclusions(plan); count > static_cast<double>(kMaxBenchmarks))
        throw UserError(fmt::format("{}: the plan expands to {:.0f} benchmarks before exclude rules, more than the "
                                    "limit of {}; split it into smaller plans",
                                    plan.source, count, kMaxBenchmarks));
    std::vector<BenchmarkSpec> cells;
    const std::vector<SettingPoint> points = setting_points(plan);
    const std::vector<PipelineSettings> pipelines = pipeline_cells(plan);
    for (const auto& model : plan.models) {
        const std::vector<GenerationSettings> lengths = generation_points(plan, is_generative && is_generative(model));
        for (const auto& backend : plan.backends) {
            for (const Device device : plan.devices) {
                for (const Precision precision : plan.precisions) {
                    for (const auto& variant : option_variants(plan, backend)) {
                        for (const auto batch : batch_sizes_of(plan, backend)) {
                          for (const GenerationSettings& generation : lengths) {
                            for (const SettingPoint& point : points) {
                              for (const PipelineSettings& pipeline : pipelines) {
                                BenchmarkSpec spec = spec_with_settings(point.settings);
                                spec.pipeline = pipeline;
                                spec.model = model;
                                spec.backend = backend;
                                spec.device = device;
                                spec.precision = precision;
                                spec.batch_size = batch;
                                spec.generation = generation;
                                spec.backend_options = variant.options;
                                spec.variant = variant_label(variant.label, point.label);
                                spec.conditions = conditions_for(point.settings, device);
                                const bool excluded = std::any_of(plan.exclude.begin(), plan.exclude.end(),
                                                                  [&](const ExcludeRule& r) { return r.matches(spec); });
                                if (!excluded) cells.push_back(std::move(spec));
                              }
                            }
                          }
                        }
                    }
                }
            }
        }
    }
    return cells;
}

std::vector<CellRepeat> run_order(std::size_t cells, std::int64_t repeats) {
    std::vector<CellRepeat> order;
    order.reserve(cells * static_cast<std::size_t>(std::max<std::int64_t>(repeats, 0)));
    for (std::int64_t repeat = 0; repeat < repeats; ++repeat)
        for (std::size_t ordinal = 0; ordinal < cells; ++ordinal) order.push_back({ordinal, repeat});
    return order;
}

}  // namespace inferbench
