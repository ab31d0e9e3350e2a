#include "core/plan/matrix.hpp"
#include "core/plan/spec_json.hpp"

#include <gtest/gtest.h>

namespace inferbench {
namespace {

TEST(Matrix, IsTheCartesianProductWithBatchInnermost) {
    Plan plan;
    plan.models = {"a", "b"};
    plan.backends = {"x"};
    plan.devices = {Device{DeviceKind::cpu, 0}, Device{DeviceKind::cuda, 1}};
    plan.precisions = {Precision::fp32};
    plan.batch_sizes = {1, 8};
    const auto cells = expand_matrix(plan);
    ASSERT_EQ(cells.size(), 8u);
    EXPECT_EQ(cells[0].label(), "a x cpu fp32 b1");
    EXPECT_EQ(cells[1].label(), "a x cpu fp32 b8");
    EXPECT_EQ(cells[2].label(), "a x cuda:1 fp32 b1");
    EXPECT_EQ(cells[7].label(), "b x cuda:1 fp32 b8");
    EXPECT_EQ(cells[0].loop, plan.settings.loop);
}

TEST(Matrix, TokenAxesMultiplyTheCellsOfGenerativeModelsOnly) {
    Plan plan;
    plan.models = {"decoder", "encoder"};
    plan.backends = {"x"};
    plan.batch_sizes = {1, 8};
    plan.input_tokens = {128, 1024};
    plan.output_tokens = {64};
    plan.settings.sampling = "seeded";
    const auto cells = expand_matrix(plan, [](std::string_view model) { return model == "decoder"; });
    ASSERT_EQ(cells.size(), 6u);  // decoder: 2 batches x 2 inputs; encoder: 2 batches
    EXPECT_EQ(cells[0].label(), "decoder x cpu fp32 b1 in128 out64");
    EXPECT_EQ(cells[1].label(), "decoder x cpu fp32 b1 in1024 out64");
    EXPECT_EQ(cells[3].label(), "decoder x cpu fp32 b8 in1024 out64");
    EXPECT_EQ(cells[3].generation.sampling, Sampling::seeded);
    EXPECT_EQ(cells[4].label(), "encoder x cpu fp32 b1");
    EXPECT_FALSE(cells[4].generation.active());
    EXPECT_EQ(spec_from_json(spec_to_json(cells[3])).generation, cells[3].generation) << "the worker gets them";
    EXPECT_FALSE(spec_from_json(spec_to_json(cells[4])).generation.active());
    // Without a test no model is generative.
    EXPECT_EQ(expand_matrix(plan).size(), 4u);
}

TEST(Matrix, ExcludeRulesDropMatchingCells) {
    Plan plan;
    plan.models = {"a", "b"};
    plan.batch_sizes = {1, 8};
    ExcludeRule rule;
    rule.model = "b";
    rule.batch_size = 8;
    plan.exclude.push_back(rule);
    const auto cells = expand_matrix(plan);
    ASSERT_EQ(cells.size(), 3u);
    EXPECT_EQ(cells[2].label(), "b onnxruntime cpu fp32 b1");
}

TEST(Matrix, ExcludeRulesMatchTypedDevicesAndPrecisions) {
    Plan plan;
    plan.models = {"a"};
    plan.devices = {Device{DeviceKind::cpu, 0}, Device{DeviceKind::cuda, 0}};
    plan.precisions = {Precision::fp32, Precision::fp16};
    plan.batch_sizes = {1};
    ExcludeRule rule;
    rule.device = Device{DeviceKind::cuda, 0};
    rule.precision = Precision::fp16;
    plan.exclude.push_back(rule);
    const auto cells = expand_matrix(plan);
    ASSERT_EQ(cells.size(), 3u);
    EXPECT_EQ(cells[2].label(), "a onnxruntime cuda:0 fp32 b1");
}

TEST(Matrix, CarriesBackendOptionsOfItsBackend) {
    Plan plan;
    plan.models = {"a"};
    plan.batch_sizes = {1};
    plan.backend_options["onnxruntime"]["intra_op_threads"] = {"2"};
    plan.backend_options["other"]["x"] = {"y"};
    const auto cells = expand_matrix(plan);
    EXPECT_EQ(cells[0].backend_options.size(), 1u);
    EXPECT_EQ(cells[0].backend_options.at("intra_op_threads"), "2");
    EXPECT_EQ(cells[0].variant, "");
}

TEST(Matrix, AnOptionWithSeveralValuesIsASweepAxisOfItsBackend) {
    Plan plan;
    plan.models = {"a"};
    plan.backends = {"torch", "onnxruntime"};
    plan.batch_sizes = {1};
    plan.backend_options["torch"]["cuda_graph"] = {"false", "true"};
    plan.backend_options["torch"]["channels_last"] = {"true"};
    const auto cells = expand_matrix(plan);
    ASSERT_EQ(cells.size(), 3u);
    EXPECT_EQ(cells[0].label(), "a torch cpu fp32 b1 [cuda_graph=false]");
    EXPECT_EQ(cells[1].label(), "a torch cpu fp32 b1 [cuda_graph=true]");
    EXPECT_EQ(cells[1].backend_options.at("channels_last"), "true");
    EXPECT_EQ(cells[2].label(), "a onnxruntime cpu fp32 b1");
}

}  // namespace
}  // namespace inferbench
