// Plans that would have run something other than what was written: repeated keys or values, an empty
// file, numbers out of range, text that is not UTF-8, a model path that is not a file.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"

namespace inferbench {
namespace {

const PlanVocabulary kVocabulary{{"resnet50", "mobilenet", "null"}, {"onnxruntime", "null", "torch"}};

std::string error_of(const std::string& yaml) {
    try {
        parse_plan(yaml, "plan.yaml", kVocabulary);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

std::string override_error(const std::string& key, const std::string& value) {
    Plan plan;
    try {
        apply_override(plan, key, value, "--flag " + value, kVocabulary);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

std::string check_error(const Plan& plan) {
    try {
        check_plan(plan);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(PlanInputs, ARepeatedKeyIsRefusedNotOverridden) {
    EXPECT_EQ(error_of("duration: 1s\nmodels: [resnet50]\nduration: 2s\n"),
              "plan.yaml:3:1: duplicate key 'duration' (first at line 1); keep one of them");
    EXPECT_EQ(error_of("backend_options:\n  torch: {channels_last: true, channels_last: false}\n"),
              "plan.yaml:2:32: duplicate key 'backend_options.torch.channels_last' (first at line 2); keep one of them");
    EXPECT_EQ(error_of("backend_options:\n  torch: {a: 1}\n  torch: {b: 2}\n"),
              "plan.yaml:3:3: duplicate key 'backend_options.torch' (first at line 2); keep one of them");
    EXPECT_EQ(error_of("exclude:\n  - {model: resnet50, model: mobilenet}\n"),
              "plan.yaml:2:23: duplicate key 'exclude.model' (first at line 2); keep one of them");
}

TEST(PlanInputs, AnEmptyPlanFileIsRefused) {
    const std::string expected =
        "plan plan.yaml is empty; give at least one key, e.g. models: [resnet50] (without a plan file, run uses "
        "the default plan)";
    EXPECT_EQ(error_of(""), expected);
    EXPECT_EQ(error_of("# nothing but a comment\n\n"), expected);
}

TEST(PlanInputs, ARepeatedAxisValueIsRefused) {
    EXPECT_EQ(error_of("batch_sizes: [1, 8, 1]\n"),
              "plan.yaml:1:21: batch_sizes lists '1' twice; list each value once (first at 1:15)");
    EXPECT_EQ(error_of("devices: [cuda, cuda:0]\n"),
              "plan.yaml:1:17: devices lists 'cuda:0' twice; list each value once (first at 1:11)");
    EXPECT_EQ(error_of("models: [resnet50, resnet50]\n"),
              "plan.yaml:1:20: models lists 'resnet50' twice; list each value once (first at 1:10)");
    EXPECT_EQ(error_of("backends: [null, null]\n"),
              "plan.yaml:1:18: backends lists 'null' twice; list each value once (first at 1:12)");
    EXPECT_EQ(error_of("precisions: [fp16, fp16]\n"),
              "plan.yaml:1:20: precisions lists 'fp16' twice; list each value once (first at 1:14)");
    EXPECT_EQ(error_of("backend_options:\n  torch: {cuda_graph: [true, false, true]}\n"),
              "plan.yaml:2:37: backend_options.torch.cuda_graph lists 'true' twice; list each value once (first "
              "at 2:24)");
}

TEST(PlanInputs, ARepeatedValueOnTheCommandLineIsRefused) {
    EXPECT_EQ(override_error("batch_sizes", "1,2,01"), "--flag 1,2,01: batch_sizes lists '01' twice; list each value once");
    EXPECT_EQ(override_error("backend_options.torch.cuda_graph", "true,true"),
              "--flag true,true: backend_options.torch.cuda_graph lists 'true' twice; list each value once");
}

TEST(PlanInputs, BatchSizesAreBounded) {
    EXPECT_EQ(parse_plan("batch_sizes: [65536]\n", "p", kVocabulary).batch_sizes, std::vector<std::int64_t>{65536});
    EXPECT_EQ(error_of("batch_sizes: [65537]\n"),
              "plan.yaml:1:15: batch size '65537' must be a whole number from 1 to 65536");
    EXPECT_EQ(override_error("batch_sizes", "99999999999"),
              "--flag 99999999999: batch size '99999999999' must be a whole number from 1 to 65536");
    EXPECT_EQ(error_of("exclude:\n  - {batch_size: 100000}\n"),
              "plan.yaml:2:18: batch size '100000' must be a whole number from 1 to 65536");
}

TEST(PlanInputs, SettingsAreBounded) {
    EXPECT_EQ(error_of("duration: 25h\n"), "plan.yaml:1:11: duration: '25h' is above the maximum 24h");
    EXPECT_EQ(error_of("warmup: 2h\n"), "plan.yaml:1:9: warmup: '2h' is above the maximum 1h");
    EXPECT_EQ(error_of("timeout: 169h\n"), "plan.yaml:1:10: timeout: '169h' is above the maximum 168h");
    EXPECT_EQ(error_of("max_iterations: 100000001\n"),
              "plan.yaml:1:17: max_iterations: '100000001' is above the maximum 100000000");
    EXPECT_EQ(error_of("min_iterations: 100000001\n"),
              "plan.yaml:1:17: min_iterations: '100000001' is above the maximum 100000000");
    EXPECT_EQ(error_of("warmup_iterations: 100000001\n"),
              "plan.yaml:1:20: warmup_iterations: '100000001' is above the maximum 100000000");
    EXPECT_EQ(error_of("max_iterations: 100000000\nduration: 24h\nwarmup: 1h\n"), "");
}

TEST(PlanInputs, MinIterationsAboveMaxIterationsIsRefused) {
    Plan plan = parse_plan("min_iterations: 100\nmax_iterations: 10\n", "plan.yaml", kVocabulary);
    EXPECT_EQ(check_error(plan),
              "plan.yaml: min_iterations 100 is above max_iterations 10; lower min_iterations or raise max_iterations "
              "(0: no limit)");
    plan.settings.loop.max_iterations = 0;  // no limit
    EXPECT_EQ(check_error(plan), "");
    plan.settings.loop.max_iterations = 100;
    EXPECT_EQ(check_error(plan), "");
}

TEST(PlanInputs, TextThatIsNotUtf8IsRefusedWhereItIs) {
    EXPECT_EQ(error_of("models: [resnet50]\nname: caf\xe9\n"),
              "plan.yaml:2:10: not valid UTF-8 (byte 0xE9 at offset 28); save the plan as UTF-8 text");
    EXPECT_EQ(error_of("name: caf\xc3\xa9\n"), "");  // the same name in UTF-8
    EXPECT_EQ(override_error("models", "caf\xe9.onnx"),
              "--flag caf\\xE9.onnx: the value is not valid UTF-8 (byte 0xE9 at offset 3); names and paths must be "
              "UTF-8 (rename the file or folder)");
    EXPECT_NE(override_error("name", "\xff").find("not valid UTF-8 (byte 0xFF at offset 0)"), std::string::npos);
    Plan plan;
    plan.settings.model_cache = "/tmp/\xfe";
    EXPECT_EQ(check_error(plan),
              "model cache folder '/tmp/\\xFE' is not valid UTF-8 (byte 0xFE at offset 5); set model_cache to a UTF-8 "
              "path");
}

TEST(PlanInputs, AModelThatIsADirectoryOrAFifoSaysSo) {
    const testing::ScratchDir dir;
    std::filesystem::create_directory(dir.path() / "model.onnx");
    ASSERT_EQ(::mkfifo(dir.file("pipe.onnx").c_str(), 0600), 0);
    std::filesystem::create_directory(dir.path() / "plain");
    const std::string zoo = "give a model file or a zoo model (resnet50, mobilenet, null)";
    EXPECT_EQ(error_of("models: [" + dir.file("model.onnx") + "]\n"),
              "plan.yaml:1:10: model '" + dir.file("model.onnx") + "' is a directory; " + zoo);
    EXPECT_EQ(override_error("models", dir.file("pipe.onnx")),
              "--flag " + dir.file("pipe.onnx") + ": model '" + dir.file("pipe.onnx") + "' is not a regular file (a FIFO); " +
                  zoo);
    EXPECT_EQ(error_of("exclude:\n  - {model: " + dir.file("plain") + "}\n"),
              "plan.yaml:2:13: model '" + dir.file("plain") + "' is a directory; " + zoo);
}

TEST(PlanInputs, APlanFileThatIsNotAFileSaysSo) {
    const testing::ScratchDir dir;
    ASSERT_EQ(::mkfifo(dir.file("plan.yaml").c_str(), 0600), 0);
    try {
        load_plan_file(dir.file("plan.yaml"), kVocabulary);  // must not wait for a writer
        FAIL() << "a FIFO is not a plan file";
    } catch (const UserError& e) {
        EXPECT_EQ(std::string(e.what()), dir.file("plan.yaml") + ": is not a regular file (a FIFO); give a plan file (YAML)");
    }
    EXPECT_THROW(load_plan_file(dir.path().string(), kVocabulary), UserError);
}

TEST(PlanInputs, TheMatrixIsBounded) {
    Plan plan;
    plan.models = {"resnet50"};
    plan.backends = {"null"};
    plan.batch_sizes.clear();
    for (std::int64_t b = 1; b <= 100; ++b) plan.batch_sizes.push_back(b);
    plan.backend_options["null"]["a"] = {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"};
    plan.backend_options["null"]["b"] = {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"};
    EXPECT_EQ(expand_matrix(plan).size(), 10'000u);
    plan.models.push_back("mobilenet");
    try {
        expand_matrix(plan);
        FAIL() << "20000 cells are over the limit";
    } catch (const UserError& e) {
        EXPECT_STREQ(e.what(),
                     "<default plan>: the plan expands to 20000 benchmarks before exclude rules, more than the limit of "
                     "10000; split it into smaller plans");
    }
}

}  // namespace
}  // namespace inferbench
