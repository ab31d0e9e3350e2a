#include "core/plan/plan.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace inferbench {
namespace {

const PlanVocabulary kVocabulary{{"resnet50", "mobilenet", "null"}, {"onnxruntime", "null", "torch"}};

// The single error line the plan produces, or "" when it parses.
std::string error_of(const std::string& yaml) {
    try {
        parse_plan(yaml, "plan.yaml", kVocabulary);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(Plan, ParsesAxesSettingsExcludesAndOptions) {
    const Plan plan = parse_plan(R"(
name: nightly
models: [resnet50, mobilenet]
backends: [onnxruntime]
devices: [cpu, cuda:1]
precisions: [fp32, fp16]
batch_sizes: [1, 8, 32]
duration: 10s
warmup: 500ms
max_iterations: 0
seed: 7
exclude:
  - {model: mobilenet, batch_size: 32}
backend_options:
  onnxruntime: {intra_op_threads: 2}
)",
                                 "plan.yaml", kVocabulary);
    EXPECT_EQ(plan.settings.name, "nightly");
    EXPECT_EQ(plan.models, (std::vector<std::string>{"resnet50", "mobilenet"}));
    EXPECT_EQ(plan.devices, (std::vector<Device>{{DeviceKind::cpu, 0}, {DeviceKind::cuda, 1}}));
    EXPECT_EQ(plan.precisions, (std::vector<Precision>{Precision::fp32, Precision::fp16}));
    EXPECT_EQ(plan.batch_sizes, (std::vector<std::int64_t>{1, 8, 32}));
    EXPECT_EQ(plan.settings.loop.duration_ns, 10'000'000'000);
    EXPECT_EQ(plan.settings.loop.warmup_ns, 500'000'000);
    EXPECT_EQ(plan.settings.loop.max_iterations, 0);
    EXPECT_EQ(plan.settings.seed, 7);
    ASSERT_EQ(plan.exclude.size(), 1u);
    EXPECT_EQ(plan.exclude[0].model, "mobilenet");
    EXPECT_EQ(plan.exclude[0].batch_size, 32);
    EXPECT_EQ(plan.backend_options.at("onnxruntime").at("intra_op_threads"), std::vector<std::string>{"2"});
}

TEST(Plan, BackendOptionListsAreSweeps) {
    const Plan plan = parse_plan("backend_options:\n  torch: {cuda_graph: [false, true]}\n", "p", kVocabulary);
    EXPECT_EQ(plan.backend_options.at("torch").at("cuda_graph"), (std::vector<std::string>{"false", "true"}));
}

TEST(Plan, MissingKeysKeepTheDocumentedDefaults) {
    const Plan plan = parse_plan("models: [resnet50]\n", "plan.yaml", kVocabulary);
    const Plan defaults;
    EXPECT_EQ(plan.backends, defaults.backends);
    EXPECT_EQ(plan.batch_sizes, defaults.batch_sizes);
    EXPECT_EQ(plan.settings.loop, RunSettings{}.loop);
}

TEST(Plan, TheWordNullNamesTheNullModelAndBackend) {
    const Plan plan = parse_plan("models: [null]\nbackends: [null]\nbackend_options:\n  null: {}\n", "p", kVocabulary);
    EXPECT_EQ(plan.models, std::vector<std::string>{"null"});
    EXPECT_EQ(plan.backends, std::vector<std::string>{"null"});
}

TEST(Plan, AScalarAxisIsAListOfOne) {
    EXPECT_EQ(parse_plan("models: resnet50\n", "p", kVocabulary).models, std::vector<std::string>{"resnet50"});
}

TEST(PlanErrors, UnknownKey) {
    EXPECT_EQ(error_of("models: [resnet50]\ndurration: 5s\n").substr(0, 43),
              "plan.yaml:2:1: unknown key 'durration'; val");
    EXPECT_NE(error_of("durration: 5s\n").find("valid keys: models, backends"), std::string::npos);
}

TEST(PlanErrors, UnknownModelNamesTheChoices) {
    EXPECT_EQ(error_of("models: [resnet50, resnet5]\n"),
              "plan.yaml:1:20: unknown model 'resnet5'; valid choices: resnet50, mobilenet, null, a path to a model "
              "file, a PyTorch model spec (torchvision:NAME, timm:NAME, hf:NAME, python:PATH.py:FACTORY), or served:NAME (a "
              "model a server serves, for the openai backend)");
}

TEST(PlanErrors, ServedModelNeedsItsName) {
    EXPECT_EQ(error_of("models: ['served:']\n"),
              "plan.yaml:1:10: model 'served:': write served:NAME, NAME the model's name on the server (its /v1/models "
              "id)");
}

TEST(PlanErrors, MissingModelFile) {
    EXPECT_NE(error_of("models: [/nonexistent/model.onnx]\n").find("plan.yaml:1:10: model file '/nonexistent/model.onnx' not found"),
              std::string::npos);
}

TEST(PlanErrors, UnknownBackend) {
    EXPECT_EQ(error_of("backends: [tensorflw]\n"),
              "plan.yaml:1:12: unknown backend 'tensorflw'; valid choices: onnxruntime, null, torch");
}

TEST(PlanErrors, UnknownPrecision) {
    EXPECT_EQ(error_of("precisions: [fp32, fp64]\n"),
              "plan.yaml:1:20: unknown precision 'fp64'; valid choices: fp32, fp16, bf16, int8, fp8, int4");
}

TEST(PlanErrors, UnknownDevice) {
    EXPECT_EQ(error_of("devices: [tpu]\n"), "plan.yaml:1:11: unknown device 'tpu'; valid choices: cpu, cuda, cuda:N");
}

TEST(PlanErrors, BadBatchSize) {
    EXPECT_EQ(error_of("batch_sizes: [1, 0]\n"), "plan.yaml:1:18: batch size '0' must be a whole number from 1 to 65536");
    EXPECT_EQ(error_of("batch_sizes: [1, eight]\n"), "plan.yaml:1:18: batch size 'eight' must be a whole number from 1 to 65536");
}

TEST(PlanErrors, EmptyAxis) {
    EXPECT_EQ(error_of("models: []\n"), "plan.yaml:1:9: models is empty; list at least one value");
}

TEST(PlanErrors, WrongTypeForAnAxis) {
    EXPECT_EQ(error_of("models: {a: 1}\n"), "plan.yaml:1:9: models must be a list, e.g. models: [a, b]");
}

TEST(PlanErrors, WrongTypeForASetting) {
    EXPECT_EQ(error_of("duration: [5s]\n"), "plan.yaml:1:11: duration must be a single duration");
    EXPECT_EQ(error_of("duration: 5\n"), "plan.yaml:1:11: duration: '5' has no unit; write e.g. 10s, 500ms or 2m");
    EXPECT_EQ(error_of("min_iterations: many\n"), "plan.yaml:1:17: min_iterations: 'many' is not a whole number");
    EXPECT_EQ(error_of("timeout: 0s\n"), "plan.yaml:1:10: timeout: '0s' is below the minimum 1ns");
}

TEST(PlanErrors, InvalidYaml) {
    EXPECT_EQ(error_of("models: [resnet50\n").substr(0, 30), "plan.yaml:2:1: invalid YAML: e");
}

TEST(PlanErrors, NotAMap) { EXPECT_EQ(error_of("- resnet50\n").substr(0, 33), "plan.yaml:1:1: a plan must be a m"); }

TEST(PlanErrors, BadExcludeRule) {
    EXPECT_EQ(error_of("exclude:\n  - {modle: resnet50}\n"),
              "plan.yaml:2:6: unknown exclude key 'modle'; valid keys: model, backend, device, precision, batch_size, input_tokens, output_tokens");
    EXPECT_EQ(error_of("exclude:\n  - {precision: fp4}\n"),
              "plan.yaml:2:17: unknown precision 'fp4'; valid choices: fp32, fp16, bf16, int8, fp8, int4");
}

TEST(PlanErrors, BadBackendOptions) {
    EXPECT_EQ(error_of("backend_options:\n  onnxrt: {threads: 2}\n"),
              "plan.yaml:2:3: unknown backend 'onnxrt'; valid choices: onnxruntime, null, torch");
}

TEST(PlanOverrides, AxesAndSettingsFromTheCommandLine) {
    Plan plan;
    apply_override(plan, "batch_sizes", "1,8,32", "--batch 1,8,32", kVocabulary);
    apply_override(plan, "duration", "10s", "--duration 10s", kVocabulary);
    apply_override(plan, "db", "/tmp/x.db", "--set db=/tmp/x.db", kVocabulary);
    EXPECT_EQ(plan.batch_sizes, (std::vector<std::int64_t>{1, 8, 32}));
    EXPECT_EQ(plan.settings.loop.duration_ns, 10'000'000'000);
    EXPECT_EQ(resolved_db_path(plan.settings), "/tmp/x.db");
}

TEST(PlanOverrides, BackendOptionsFromTheCommandLine) {
    Plan plan;
    apply_override(plan, "backend_options.torch.cuda_graph", "false,true", "--set", kVocabulary);
    EXPECT_EQ(plan.backend_options.at("torch").at("cuda_graph"), (std::vector<std::string>{"false", "true"}));
    EXPECT_THROW(apply_override(plan, "backend_options.torch", "x", "--set", kVocabulary), UserError);
    EXPECT_THROW(apply_override(plan, "backend_options.nope.x", "1", "--set", kVocabulary), UserError);
}

TEST(PlanOverrides, ErrorsNameTheFlag) {
    Plan plan;
    EXPECT_THROW(
        {
            try {
                apply_override(plan, "models", "resnet50,bogus", "--model resnet50,bogus", kVocabulary);
            } catch (const UserError& e) {
                EXPECT_STREQ(e.what(),
                             "--model resnet50,bogus: unknown model 'bogus'; valid choices: resnet50, "
                             "mobilenet, null, a path to a model file, a PyTorch model spec (torchvision:NAME, "
                             "timm:NAME, hf:NAME, python:PATH.py:FACTORY), or served:NAME (a model a server serves, "
                             "for the openai backend)");
                throw;
            }
        },
        UserError);
    EXPECT_THROW(apply_override(plan, "colour", "blue", "--set colour=blue", kVocabulary), UserError);
}

TEST(PlanJson, EchoesEverySetting) {
    const std::string json = plan_to_json(Plan{});
    EXPECT_NE(json.find("\"duration\":\"5s\""), std::string::npos);
    EXPECT_NE(json.find("\"models\":[\"mobilenet\",\"resnet50\"]"), std::string::npos);
}

// PyTorch model specs are models of the plan; their syntax is checked where the plan is read.
TEST(PlanModelSpecs, AcceptedAndCheckedWithTheirPosition) {
    const Plan plan = parse_plan("models: [resnet50, torchvision:resnet18, \"timm:convnext_tiny\", hf:bert-large-uncased]\n",
                                 "specs.yaml", kVocabulary);
    EXPECT_EQ(plan.models, (std::vector<std::string>{"resnet50", "torchvision:resnet18", "timm:convnext_tiny",
                                                     "hf:bert-large-uncased"}));
    const auto message = [](const std::string& yaml) {
        try {
            parse_plan(yaml, "specs.yaml", kVocabulary);
        } catch (const UserError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message("models: [resnet50, keras:vgg16]\n"),
              "specs.yaml:1:20: model 'keras:vgg16': unknown model library 'keras'; write torchvision:NAME, "
              "timm:NAME, hf:NAME or python:PATH.py:FACTORY");
    EXPECT_EQ(message("models:\n  - \"timm:\"\n"),
              "specs.yaml:2:5: model 'timm:': the timm model name is missing; write torchvision:NAME, timm:NAME, "
              "hf:NAME or python:PATH.py:FACTORY");
    EXPECT_NE(message("models: [\"python:my.py\"]\n").find("write python:PATH.py:FACTORY"), std::string::npos);
    EXPECT_NE(message("models: [\"python:/no/such/file.py:make_model\"]\n").find("'/no/such/file.py' not found"),
              std::string::npos);
}

}  // namespace
}  // namespace inferbench

