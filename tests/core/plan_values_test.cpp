// Every axis value is read once, into its type, where the plan is read: a plan file, an exclude rule,
// --set or a run flag, and a stored plan give the same one-line error for the same bad value, and
// the typed value is what the matrix gets.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"

namespace inferbench {
namespace {

const PlanVocabulary kVocabulary{{"resnet50", "mobilenet", "null"}, {"onnxruntime", "null", "torch"}};

std::string yaml_error(const std::string& yaml) {
    try {
        parse_plan(yaml, "plan.yaml", kVocabulary);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

std::string set_error(const std::string& key, const std::string& value) {
    Plan plan;
    try {
        apply_override(plan, key, value, "--set " + key + "=" + value, kVocabulary);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

std::string stored_error(const std::string& json) {
    try {
        plan_from_json(json, "the plan stored with run 2", kVocabulary);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

struct BadValue {
    std::string axis, rule_key, good, value, what;
};

const BadValue kBadValues[] = {
    {"devices", "device", "cpu", "tpu", "unknown device 'tpu'; valid choices: cpu, cuda, cuda:N"},
    {"devices", "device", "cpu", "cuda:x", "unknown device 'cuda:x'; valid choices: cpu, cuda, cuda:N"},
    {"precisions", "precision", "fp32", "fp64", "unknown precision 'fp64'; valid choices: fp32, fp16, bf16, int8, fp8, int4"},
    {"batch_sizes", "batch_size", "1", "0", "batch size '0' must be a whole number from 1 to 65536"},
    {"batch_sizes", "batch_size", "1", "65537", "batch size '65537' must be a whole number from 1 to 65536"},
    {"batch_sizes", "batch_size", "1", "eight", "batch size 'eight' must be a whole number from 1 to 65536"},
};

TEST(PlanValues, ABadValueGivesTheSameLineWhereverItIsWritten) {
    for (const auto& bad : kBadValues) {
        const std::string list = bad.axis + ": [" + bad.value + "]\n";
        EXPECT_EQ(yaml_error(list), "plan.yaml:1:" + std::to_string(bad.axis.size() + 4) + ": " + bad.what);
        EXPECT_EQ(yaml_error("exclude:\n  - {" + bad.rule_key + ": " + bad.value + "}\n"),
                  "plan.yaml:2:" + std::to_string(bad.rule_key.size() + 8) + ": " + bad.what);
        const std::string items = bad.good + "," + bad.value;
        EXPECT_EQ(set_error(bad.axis, items), "--set " + bad.axis + "=" + items + ": " + bad.what);
        EXPECT_EQ(stored_error("{\"" + bad.axis + "\": [\"" + bad.value + "\"]}"),
                  "the plan stored with run 2:1:" + std::to_string(bad.axis.size() + 6) + ": " + bad.what);
    }
}

TEST(PlanValues, AxesHoldTypedValues) {
    Plan plan = parse_plan("devices: [gpu:1, cpu]\nprecisions: [bf16]\nbatch_sizes: [08, 1]\n", "p", kVocabulary);
    EXPECT_EQ(plan.devices, (std::vector<Device>{{DeviceKind::cuda, 1}, {DeviceKind::cpu, 0}}));
    EXPECT_EQ(plan.precisions, std::vector<Precision>{Precision::bf16});
    EXPECT_EQ(plan.batch_sizes, (std::vector<std::int64_t>{8, 1}));
    apply_override(plan, "devices", "cuda", "--device cuda", kVocabulary);
    apply_override(plan, "precisions", "fp16,int8", "--precision fp16,int8", kVocabulary);
    apply_override(plan, "batch_sizes", "1,8", "--batch 1,8", kVocabulary);
    EXPECT_EQ(plan.devices, (std::vector<Device>{Device{DeviceKind::cuda, 0}}));
    EXPECT_EQ(plan.precisions, (std::vector<Precision>{Precision::fp16, Precision::int8}));
    EXPECT_EQ(plan.batch_sizes, (std::vector<std::int64_t>{1, 8}));
    const auto cells = expand_matrix(plan);
    ASSERT_EQ(cells.size(), 8u);
    EXPECT_EQ(cells[1].label(), "mobilenet onnxruntime cuda:0 fp16 b8");
}

TEST(PlanValues, ExcludeRulesHoldTypedValues) {
    const Plan plan = parse_plan("exclude:\n  - {device: gpu, precision: int8, batch_size: 016}\n", "p", kVocabulary);
    ASSERT_EQ(plan.exclude.size(), 1u);
    EXPECT_EQ(plan.exclude[0].device, (Device{DeviceKind::cuda, 0}));
    EXPECT_EQ(plan.exclude[0].precision, Precision::int8);
    EXPECT_EQ(plan.exclude[0].batch_size, 16);
}

TEST(PlanValues, SpellingsOfOneValueAreOneValue) {
    EXPECT_EQ(set_error("devices", "gpu,cuda:0"), "--set devices=gpu,cuda:0: devices lists 'cuda:0' twice; list each value once");
    EXPECT_EQ(yaml_error("batch_sizes: [8, 008]\n"),
              "plan.yaml:1:18: batch_sizes lists '008' twice; list each value once (first at 1:15)");
}

TEST(PlanValues, OneReadingOfABatchSize) {
    EXPECT_EQ(parse_batch_size("1"), 1);
    EXPECT_EQ(parse_batch_size("65536"), 65536);
    EXPECT_EQ(parse_batch_size("0"), std::nullopt);
    EXPECT_EQ(parse_batch_size("65537"), std::nullopt);
    EXPECT_EQ(parse_batch_size("-4"), std::nullopt);
    EXPECT_EQ(parse_batch_size("8x"), std::nullopt);
    EXPECT_EQ(parse_batch_size(""), std::nullopt);
}

}  // namespace
}  // namespace inferbench
