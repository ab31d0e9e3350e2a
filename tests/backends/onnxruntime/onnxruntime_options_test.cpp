// Parsing the plan's backend_options.onnxruntime map: defaults, every valid value, one-line errors.
#include "backends/onnxruntime/onnxruntime_options.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/options.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;

std::string parse_error(const OptionMap& options) {
    try {
        parse_onnxruntime_options(options);
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(OnnxRuntimeOptions, DefaultsLetOnnxRuntimeChoose) {
    const OnnxRuntimeOptions parsed = parse_onnxruntime_options({});
    EXPECT_EQ(parsed.intra_op_threads, 0);
    EXPECT_EQ(parsed.inter_op_threads, 0);
    EXPECT_EQ(parsed.graph_optimization, ORT_ENABLE_ALL);
    EXPECT_EQ(parsed.execution_mode, ORT_SEQUENTIAL);
    EXPECT_EQ(parsed.layer_profile, 0);
}

TEST(OnnxRuntimeOptions, ParsesEveryOption) {
    const OnnxRuntimeOptions parsed = parse_onnxruntime_options({{"intra_op_threads", "4"},
                                                                 {"inter_op_threads", "2"},
                                                                 {"graph_optimization", "extended"},
                                                                 {"execution_mode", "parallel"},
                                                                 {"layer_profile", "20"}});
    EXPECT_EQ(parsed.layer_profile, 20);
    EXPECT_EQ(parsed.intra_op_threads, 4);
    EXPECT_EQ(parsed.inter_op_threads, 2);
    EXPECT_EQ(parsed.graph_optimization, ORT_ENABLE_EXTENDED);
    EXPECT_EQ(parsed.execution_mode, ORT_PARALLEL);
}

TEST(OnnxRuntimeOptions, MapsEveryOptimizationLevel) {
    const std::pair<std::string, GraphOptimizationLevel> levels[] = {
        {"disable", ORT_DISABLE_ALL}, {"basic", ORT_ENABLE_BASIC}, {"extended", ORT_ENABLE_EXTENDED}, {"all", ORT_ENABLE_ALL}};
    for (const auto& [text, level] : levels)
        EXPECT_EQ(parse_onnxruntime_options({{"graph_optimization", text}}).graph_optimization, level) << text;
}

TEST(OnnxRuntimeOptions, UnknownKeyNamesItAndTheValidOnes) {
    EXPECT_THAT(parse_error({{"intra_threads", "2"}}),
                AllOf(HasSubstr("'intra_threads'"), HasSubstr("intra_op_threads"), HasSubstr("execution_mode")));
}

TEST(OnnxRuntimeOptions, BadThreadCountsAreUserErrors) {
    for (const char* bad : {"-1", "two", "2x", "", "99999999999"}) {
        EXPECT_THAT(parse_error({{"intra_op_threads", bad}}),
                    AllOf(HasSubstr("onnxruntime option intra_op_threads"), HasSubstr("'" + std::string(bad) + "'"),
                          HasSubstr("a whole number 0..2147483647")))
            << bad;
    }
    EXPECT_THAT(parse_error({{"inter_op_threads", "1.5"}}), AllOf(HasSubstr("inter_op_threads"), HasSubstr("'1.5'")));
    EXPECT_EQ(parse_onnxruntime_options({{"intra_op_threads", "2147483647"}}).intra_op_threads, 2147483647);
}

TEST(OnnxRuntimeOptions, LayerProfileIsABoundedIterationCount) {
    EXPECT_EQ(parse_onnxruntime_options({{"layer_profile", "1000"}}).layer_profile, 1000);
    for (const char* bad : {"-1", "1001", "yes", "2.5"}) {
        EXPECT_THAT(parse_error({{"layer_profile", bad}}),
                    AllOf(HasSubstr("onnxruntime option layer_profile"), HasSubstr("'" + std::string(bad) + "'"),
                          HasSubstr("a whole number 0..1000")))
            << bad;
    }
}

TEST(OnnxRuntimeOptions, BadChoicesListTheValidValues) {
    EXPECT_THAT(parse_error({{"graph_optimization", "max"}}),
                AllOf(HasSubstr("graph_optimization"), HasSubstr("'max'"), HasSubstr("disable|basic|extended|all")));
    EXPECT_THAT(parse_error({{"execution_mode", "Parallel"}}),
                AllOf(HasSubstr("execution_mode"), HasSubstr("sequential|parallel")));
}

TEST(OnnxRuntimeOptions, ListsEveryOptionWithItsDefault) {
    const std::vector<BackendOption> list = onnxruntime_option_list();
    ASSERT_EQ(list.size(), 23u);
    for (const BackendOption& option : list) {
        EXPECT_NO_THROW(parse_onnxruntime_options({{option.name, option.default_value}})) << option.name;
        EXPECT_FALSE(option.help.empty());
    }
}

TEST(OnnxRuntimeOptions, GpuDefaultsAreOnnxRuntimesOwn) {
    const OnnxRuntimeOptions parsed = parse_onnxruntime_options({});
    EXPECT_EQ(parsed.runtime, "");
    EXPECT_EQ(parsed.gpu, OrtGpuOptions{});
    EXPECT_EQ(parsed.gpu.provider, GpuProvider::cuda);
    EXPECT_TRUE(gpu_options_given(parsed).empty());
    EXPECT_EQ(gpu_provider_options(parsed.gpu),
              (ProviderOptions{{"arena_extend_strategy", "kNextPowerOfTwo"}, {"cudnn_conv_algo_search", "EXHAUSTIVE"},
                               {"enable_cuda_graph", "0"}, {"prefer_nhwc", "0"}, {"use_tf32", "1"}}));
}

TEST(OnnxRuntimeOptions, GpuOptionsBecomeProviderOptions) {
    const OnnxRuntimeOptions parsed = parse_onnxruntime_options({{"runtime", "/opt/onnxruntime-gpu/capi"},
                                                                 {"cudnn_conv_algo_search", "heuristic"},
                                                                 {"arena_extend_strategy", "same_as_requested"},
                                                                 {"gpu_mem_limit", "8589934592"},
                                                                 {"enable_cuda_graph", "true"},
                                                                 {"use_tf32", "false"},
                                                                 {"prefer_nhwc", "on"},
                                                                 {"device_resident", "yes"}});
    EXPECT_EQ(parsed.runtime, "/opt/onnxruntime-gpu/capi");
    EXPECT_TRUE(parsed.gpu.device_resident);
    EXPECT_EQ(gpu_provider_options(parsed.gpu),
              (ProviderOptions{{"arena_extend_strategy", "kSameAsRequested"}, {"cudnn_conv_algo_search", "HEURISTIC"},
                               {"enable_cuda_graph", "1"}, {"gpu_mem_limit", "8589934592"}, {"prefer_nhwc", "1"},
                               {"use_tf32", "0"}}));
    EXPECT_THAT(gpu_options_given(parsed),
                ::testing::ElementsAre("cudnn_conv_algo_search", "arena_extend_strategy", "gpu_mem_limit",
                                       "enable_cuda_graph", "use_tf32", "prefer_nhwc", "device_resident"));
}

TEST(OnnxRuntimeOptions, TensorRtTakesItsOwnCudaGraphOption) {
    const OnnxRuntimeOptions parsed =
        parse_onnxruntime_options({{"execution_provider", "tensorrt"}, {"enable_cuda_graph", "1"}});
    EXPECT_EQ(parsed.gpu.provider, GpuProvider::tensorrt);
    EXPECT_EQ(gpu_provider_options(parsed.gpu), (ProviderOptions{{"trt_cuda_graph_enable", "1"}}));
    EXPECT_THAT(gpu_options_given(parsed), ::testing::ElementsAre("execution_provider", "enable_cuda_graph"));
}

TEST(OnnxRuntimeOptions, BadGpuValuesNameTheOptionAndTheValidValues) {
    EXPECT_THAT(parse_error({{"execution_provider", "rocm"}}),
                AllOf(HasSubstr("execution_provider"), HasSubstr("'rocm'"), HasSubstr("cuda"), HasSubstr("tensorrt")));
    EXPECT_THAT(parse_error({{"cudnn_conv_algo_search", "EXHAUSTIVE"}}), HasSubstr("exhaustive"));
    EXPECT_THAT(parse_error({{"enable_cuda_graph", "maybe"}}), HasSubstr("enable_cuda_graph"));
    EXPECT_THAT(parse_error({{"gpu_mem_limit", "-1"}}), HasSubstr("gpu_mem_limit"));
}

TEST(OnnxRuntimeOptions, PrecisionOptionsDefaultToMinmaxInt8PerChannel) {
    const OrtPrecisionOptions parsed = parse_onnxruntime_options({}).precision;
    EXPECT_EQ(parsed.calibration_method, models::quant::CalibrationMethod::minmax);
    EXPECT_DOUBLE_EQ(parsed.calibration_percentile, 99.999);
    EXPECT_EQ(parsed.calibration_batches, 4);
    EXPECT_TRUE(parsed.calibration_data.empty());
    EXPECT_TRUE(parsed.per_channel);
    EXPECT_EQ(parsed.activation_type, models::quant::ActivationType::int8);
    EXPECT_FALSE(parsed.keep_io_types);
}

TEST(OnnxRuntimeOptions, PrecisionOptionsParseAndRejectBadValues) {
    const OrtPrecisionOptions parsed = parse_onnxruntime_options({{"calibration_method", "entropy"},
                                                                  {"calibration_percentile", "99.9"},
                                                                  {"calibration_batches", "16"},
                                                                  {"per_channel", "false"},
                                                                  {"activation_type", "uint8"},
                                                                  {"keep_io_types", "true"}})
                                           .precision;
    EXPECT_EQ(parsed.calibration_method, models::quant::CalibrationMethod::entropy);
    EXPECT_DOUBLE_EQ(parsed.calibration_percentile, 99.9);
    EXPECT_EQ(parsed.calibration_batches, 16);
    EXPECT_FALSE(parsed.per_channel);
    EXPECT_EQ(parsed.activation_type, models::quant::ActivationType::uint8);
    EXPECT_TRUE(parsed.keep_io_types);
    EXPECT_THAT(parse_error({{"calibration_method", "kl"}}), HasSubstr("minmax|percentile|entropy"));
    EXPECT_THAT(parse_error({{"calibration_percentile", "42"}}), HasSubstr("a percentage above 50"));
    EXPECT_THAT(parse_error({{"calibration_batches", "0"}}), HasSubstr("calibration_batches"));
    EXPECT_THAT(parse_error({{"activation_type", "int4"}}), HasSubstr("int8|uint8"));
    EXPECT_THAT(parse_error({{"reduce_range", "7"}}), HasSubstr("reduce_range"));
}

// auto: reduced-range weights exactly where int8 products are summed in a saturating int16 (x86-64 without VNNI);
// the option overrides, and the choice changes the cached file's key.
TEST(OnnxRuntimeOptions, Int8WeightRangeFollowsTheCpuUnlessTheOptionSaysOtherwise) {
    using models::quant::WeightRange;
    using Reason = quantization_metrics::WeightRangeReason;
    const OrtPrecisionOptions automatic = parse_onnxruntime_options({}).precision;
    EXPECT_FALSE(automatic.reduce_range.has_value());
    const auto choose = [](const OrtPrecisionOptions& o, DeviceKind device, CpuInt8Dot cpu) {
        const Int8WeightRange c = int8_weight_range_for(o, device, cpu);
        return std::make_pair(c.range, c.reason);
    };
    const auto cpu = DeviceKind::cpu;
    EXPECT_EQ(choose(automatic, cpu, CpuInt8Dot::saturating),
              std::make_pair(WeightRange::reduced, Reason::cpu_without_vnni));
    EXPECT_EQ(choose(automatic, cpu, CpuInt8Dot::avx512_vnni),
              std::make_pair(WeightRange::full, Reason::cpu_avx512_vnni));
    EXPECT_EQ(choose(automatic, cpu, CpuInt8Dot::avx_vnni), std::make_pair(WeightRange::full, Reason::cpu_avx_vnni));
    EXPECT_EQ(choose(automatic, cpu, CpuInt8Dot::not_x86), std::make_pair(WeightRange::full, Reason::cpu_not_x86));
    EXPECT_EQ(choose(automatic, DeviceKind::cuda, CpuInt8Dot::saturating),
              std::make_pair(WeightRange::full, Reason::gpu));
    const OrtPrecisionOptions reduced = parse_onnxruntime_options({{"reduce_range", "true"}}).precision;
    const OrtPrecisionOptions full = parse_onnxruntime_options({{"reduce_range", "false"}}).precision;
    EXPECT_EQ(choose(reduced, cpu, CpuInt8Dot::avx512_vnni), std::make_pair(WeightRange::reduced, Reason::option));
    EXPECT_EQ(choose(full, cpu, CpuInt8Dot::saturating), std::make_pair(WeightRange::full, Reason::option));

    const auto metrics = int8_weight_range_metrics({WeightRange::reduced, Reason::cpu_without_vnni});
    ASSERT_EQ(metrics.size(), 2U);
    EXPECT_EQ(metrics[0].name, quantization_metrics::kWeightMaxLevel);
    EXPECT_EQ(metrics[0].value, 64);
    EXPECT_EQ(metrics[1].name, quantization_metrics::kWeightRangeReason);
    EXPECT_EQ(metrics[1].value, 4);
    EXPECT_EQ(quantization_metrics::weight_range_note(metrics[0].value, metrics[1].value),
              "int8 weights in [-64, 64] (reduced range): an x86-64 CPU without VNNI, whose int8 kernels add u8 x s8 "
              "products in int16 and would saturate at 8 bits");
    EXPECT_EQ(quantization_metrics::weight_range_note(127, 2), "int8 weights in [-127, 127]: the CPU has AVX-512 VNNI");
    EXPECT_EQ(quantization_metrics::weight_range_note(std::nullopt, 2), "");

    EXPECT_EQ(int8_settings_text(automatic, cpu, WeightRange::full),
              "method=minmax per_channel=true activation_type=int8")
        << "the key of files made before the option existed";
    EXPECT_EQ(int8_settings_text(automatic, cpu, WeightRange::reduced),
              "method=minmax per_channel=true activation_type=int8 weights=reduce_range");
}

TEST(OnnxRuntimeOptions, DeviceResidentIsTheOneDeclaration) {
    EXPECT_THAT(onnxruntime_option_list(), Contains(device_resident_option()));
}

}  // namespace
}  // namespace inferbench
