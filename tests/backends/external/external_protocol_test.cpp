// The external-runner protocol's pure parts: one stdout line at a time, the request, the refusals.
#include "backends/external/external_protocol.hpp"

#include <gtest/gtest.h>

#include "backends/external/external_variants.hpp"

namespace inferbench::external {
namespace {

TEST(RunnerLine, IterationWithAndWithoutDeviceTimes) {
    const auto full = parse_runner_line(
        R"({"type":"iteration","start_ns":100,"e2e_ns":50,"enqueue_ns":5,"h2d_ns":6,"compute_ns":30,"d2h_ns":7})");
    ASSERT_EQ(full.kind, RunnerLine::Kind::iteration);
    EXPECT_EQ(full.record.start_ns, 100);
    EXPECT_EQ(full.record.e2e_ns, 50);
    EXPECT_EQ(full.record.enqueue_ns, 5);
    EXPECT_EQ(full.record.h2d_ns, 6);
    EXPECT_EQ(full.record.compute_ns, 30);
    EXPECT_EQ(full.record.d2h_ns, 7);

    const auto host_only = parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":2,"h2d_ns":null})");
    EXPECT_EQ(host_only.record.h2d_ns, kNotMeasured) << "null means not measured";
    EXPECT_EQ(host_only.record.compute_ns, kNotMeasured) << "absent means not measured";
}

TEST(RunnerLine, PreAndPostProcessingArePartsOfTheIteration) {
    const auto both = parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":100,"pre_ns":30,"post_ns":20})");
    EXPECT_EQ(both.pre_ns, 30);
    EXPECT_EQ(both.post_ns, 20);
    const auto pre_only = parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":100,"pre_ns":100})");
    EXPECT_EQ(pre_only.pre_ns, 100);
    EXPECT_EQ(pre_only.post_ns, kNotMeasured);
    try {
        parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":100,"pre_ns":80,"post_ns":30})");
        FAIL() << "stages longer than the iteration must be refused";
    } catch (const ProtocolError& e) {
        EXPECT_STREQ(e.what(),
                     "pre_ns + post_ns (110 ns) exceed e2e_ns (100 ns): the stages are parts of the iteration");
    }
    EXPECT_THROW(parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":100,"pre_ns":-1})"), ProtocolError);
}

TEST(HostStageTotals, MeansOverTheIterationsThatReportedAStage) {
    HostStageTotals totals;
    EXPECT_TRUE(totals.metrics().empty()) << "nothing reported, nothing stored";
    totals.add(parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":1000,"pre_ns":300,"post_ns":100})"));
    totals.add(parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":2000,"pre_ns":500,"post_ns":300})"));
    totals.add(parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":9000})"));  // reported none: left out
    const auto both = totals.metrics();
    ASSERT_EQ(both.size(), 4u);
    EXPECT_EQ(both[0].name, "host_stage_iterations");
    EXPECT_EQ(both[0].value, 2);
    EXPECT_EQ(both[1].name, "host_stage_e2e_mean_ns");
    EXPECT_EQ(both[1].value, 1500);
    EXPECT_EQ(both[2].name, "host_stage_pre_mean_ns");
    EXPECT_EQ(both[2].value, 400);
    EXPECT_EQ(both[3].name, "host_stage_post_mean_ns");
    EXPECT_EQ(both[3].value, 200);
    // Post-processing reported by one iteration of two: its mean would be over another set than e2e's.
    HostStageTotals partial;
    partial.add(parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":1000,"pre_ns":300,"post_ns":100})"));
    partial.add(parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":1000,"pre_ns":300})"));
    const auto pre_only = partial.metrics();
    ASSERT_EQ(pre_only.size(), 3u);
    EXPECT_EQ(pre_only[2].name, "host_stage_pre_mean_ns");
}

TEST(RunnerLine, IterationTimesMustBeWholeNonNegativeNanoseconds) {
    EXPECT_THROW(parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":2.5})"), ProtocolError);
    EXPECT_THROW(parse_runner_line(R"({"type":"iteration","start_ns":1,"e2e_ns":-3})"), ProtocolError);
    EXPECT_THROW(parse_runner_line(R"({"type":"iteration","start_ns":"1","e2e_ns":3})"), ProtocolError);
    EXPECT_THROW(parse_runner_line(R"({"type":"iteration","start_ns":18446744073709551615,"e2e_ns":3})"),
                 ProtocolError);
    try {
        parse_runner_line(R"({"type":"iteration","start_ns":1})");
        FAIL() << "an iteration without e2e_ns must be refused";
    } catch (const ProtocolError& e) {
        EXPECT_STREQ(e.what(), "the line lacks e2e_ns");
    }
}

TEST(RunnerLine, HeaderDoneAndError) {
    const auto header = parse_runner_line(
        R"({"type":"header","framework":"torch","version":"2.3.0","device":"cuda:0","device_name":"H200","extra":1})");
    ASSERT_EQ(header.kind, RunnerLine::Kind::header);
    EXPECT_EQ(header.header.framework, "torch");
    EXPECT_EQ(header.header.version, "2.3.0");
    EXPECT_EQ(header.header.device, "cuda:0");
    EXPECT_EQ(header.header.device_name, "H200");
    EXPECT_THROW(parse_runner_line(R"({"type":"header","framework":"torch"})"), ProtocolError) << "version required";

    const auto done = parse_runner_line(R"({"type":"done","iterations":42,"stopped":false})");
    ASSERT_EQ(done.kind, RunnerLine::Kind::done);
    EXPECT_EQ(done.done_iterations, 42);

    const auto error = parse_runner_line(R"({"type":"error","message":"CUDA out of memory"})");
    ASSERT_EQ(error.kind, RunnerLine::Kind::error);
    EXPECT_EQ(error.text, "CUDA out of memory");
}

TEST(RunnerLine, AHeaderSaysWhatItFedOfThePlansInputs) {
    const auto fed = parse_runner_line(
        R"({"type":"header","framework":"f","version":"1","inputs":{"samples":3,"cycled":true}})");
    ASSERT_TRUE(fed.header.inputs);
    EXPECT_EQ(fed.header.inputs->samples, 3);
    EXPECT_TRUE(fed.header.inputs->cycled);
    EXPECT_FALSE(parse_runner_line(R"({"type":"header","framework":"f","version":"1"})").header.inputs);
    EXPECT_THROW(parse_runner_line(R"({"type":"header","framework":"f","version":"1","inputs":{"samples":0,"cycled":false}})"),
                 ProtocolError);
    EXPECT_THROW(parse_runner_line(R"({"type":"header","framework":"f","version":"1","inputs":{"samples":2}})"),
                 ProtocolError);
}

TEST(RunnerLine, PlainTextIsTheRunnersOwnOutputButBrokenJsonIsAnError) {
    const auto text = parse_runner_line("Downloading weights... done");
    EXPECT_EQ(text.kind, RunnerLine::Kind::text);
    EXPECT_EQ(text.text, "Downloading weights... done");
    EXPECT_EQ(parse_runner_line("").kind, RunnerLine::Kind::text);
    EXPECT_THROW(parse_runner_line(R"({"type":"iteration",)"), ProtocolError);
    EXPECT_THROW(parse_runner_line(R"(  {"type":"progress"})"), ProtocolError) << "unknown type";
    EXPECT_THROW(parse_runner_line(R"({"no_type":1})"), ProtocolError);
}

TEST(RunnerHeader, DescribeFieldsDecideWhichCellsRun) {
    const auto parsed = parse_runner_line(
        R"({"type":"header","framework":"torch","version":"1.13","devices":["cpu"],)"
        R"("precisions":{"cpu":["fp32","bf16"]},"notes":{"cpu/fp16":"no fp16 convolution on the CPU"},)"
        R"("precision_formats":{"bf16":["pt"]}})");
    const RunnerHeader& header = parsed.header;
    const Device cpu{DeviceKind::cpu, 0};
    EXPECT_EQ(header.refusal(cpu, Precision::fp32, ""), "");
    EXPECT_EQ(header.refusal(cpu, Precision::fp16, ""), "no fp16 convolution on the CPU");
    EXPECT_EQ(header.refusal(cpu, Precision::int8, ""), "torch 1.13 runs no int8 on cpu");
    EXPECT_EQ(header.refusal({DeviceKind::cuda, 1}, Precision::fp32, ""), "torch 1.13 has no cuda device here");
    EXPECT_EQ(header.refusal(cpu, Precision::bf16, "onnx"), "bf16 with torch needs a model file in one of: pt");
    EXPECT_EQ(header.refusal(cpu, Precision::bf16, "pt"), "");

    RunnerHeader zoo = header;
    zoo.zoo_models = {"mobilenet", "resnet50"};
    EXPECT_EQ(zoo.model_refusal("mobilenet"), "");
    EXPECT_EQ(zoo.model_refusal("bert"), "this runner builds the zoo models mobilenet, resnet50; not bert");
    // No model at all (`list backends` asks about the backend, not a model): nothing to refuse.
    EXPECT_EQ(zoo.model_refusal(""), "");

    RunnerHeader unavailable = header;
    unavailable.unavailable = "torch.compile needs PyTorch >= 2.0";
    EXPECT_EQ(unavailable.refusal(cpu, Precision::fp32, ""), "torch.compile needs PyTorch >= 2.0");
    EXPECT_THROW(parse_runner_line(R"({"type":"header","framework":"a","version":"1","devices":"cpu"})"),
                 ProtocolError);
}

TEST(Request, CarriesTheCellAndTheLoopSettings) {
    BenchmarkSpec spec;
    spec.model = "resnet50";
    spec.backend = "torch-eager";
    spec.device = {DeviceKind::cuda, 1};
    spec.precision = Precision::bf16;
    spec.batch_size = 8;
    spec.loop.warmup_ns = 1'000'000'000;
    spec.loop.warmup_iterations = 3;
    spec.loop.duration_ns = 5'000'000'000;
    spec.loop.min_iterations = 0;
    spec.loop.max_iterations = 1000;
    spec.seed = 18'000'000'000'000'000'000ULL;
    spec.backend_options = {{"channels_last", "true"}};
    const auto request = make_request("resnet50", spec);
    EXPECT_EQ(request.at("protocol_version"), kProtocolVersion);
    EXPECT_EQ(request.at("model"), "resnet50");
    EXPECT_EQ(request.at("batch_size"), 8);
    EXPECT_EQ(request.at("precision"), "bf16");
    EXPECT_EQ(request.at("device"), "cuda:1");
    EXPECT_EQ(request.at("warmup_ns"), 1'000'000'000);
    EXPECT_EQ(request.at("warmup_iterations"), 3);
    EXPECT_EQ(request.at("duration_ns"), 5'000'000'000);
    EXPECT_EQ(request.at("min_iterations"), 1) << "at least one iteration, as the harness's own loop";
    EXPECT_EQ(request.at("max_iterations"), 1000);
    EXPECT_EQ(request.at("seed").get<std::uint64_t>(), 18'000'000'000'000'000'000ULL) << "seeds are unsigned";
    EXPECT_EQ(request.at("options"), nlohmann::json({{"channels_last", "true"}}));

    spec.loop.min_iterations = 5000;
    EXPECT_EQ(make_request("m.pt", spec).at("min_iterations"), 1000) << "never above max_iterations";
    spec.loop.max_iterations = 0;
    EXPECT_EQ(make_request("m.pt", spec).at("min_iterations"), 5000) << "0: no maximum";
    EXPECT_EQ(make_request("m.pt", spec).at("options").size(), 1u);
    EXPECT_FALSE(make_request("m.pt", spec).contains("inputs")) << "only where the plan gives input files";
    spec.inputs = "/data/set";
    EXPECT_EQ(make_request("m.pt", spec).at("inputs"), "/data/set");
}

TEST(Variants, EachModuleHasItsRunnerAndInterpretersAreTriedInOrder) {
    EXPECT_EQ(find_variant("torch-eager").runner_arguments, (std::vector<std::string>{"--mode", "eager"}));
    EXPECT_EQ(find_variant("torch-compile").runner_arguments, (std::vector<std::string>{"--mode", "compile"}));
    EXPECT_TRUE(find_variant("torch-eager").builds_zoo_models);
    EXPECT_FALSE(find_variant("onnxruntime-python").builds_zoo_models) << "inferbench exports ONNX for it";
    EXPECT_FALSE(find_variant("external").uses_python());
    EXPECT_THROW(find_variant("caffe"), std::logic_error);
    EXPECT_EQ(interpreter_candidates(""), (std::vector<std::string>{"python3", "/usr/bin/python3"}));
    EXPECT_EQ(interpreter_candidates("/opt/venv/bin/python"), (std::vector<std::string>{"/opt/venv/bin/python"}));
}

}  // namespace
}  // namespace inferbench::external
