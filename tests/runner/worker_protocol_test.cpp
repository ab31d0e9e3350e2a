#include "runner/wire/worker_protocol.hpp"

#include <gtest/gtest.h>

#include "core/plan/spec_json.hpp"
#include "runner/orchestrator/telemetry_recorder.hpp"

namespace inferbench::runner::worker_protocol {
namespace {

// Through the wire as the event pipe carries it: one line of text, parsed back.
Event through_wire(const Event& event) {
    const std::string line = to_json(event).dump();
    EXPECT_EQ(line.find('\n'), std::string::npos) << "one event is one line";
    return event_from_json(nlohmann::json::parse(line));
}

template <typename E>
E round_trip(const E& event) {
    const Event back = through_wire(event);
    EXPECT_TRUE(std::holds_alternative<E>(back)) << "sent " << E::kName << ", read " << event_name(back);
    return std::holds_alternative<E>(back) ? std::get<E>(back) : E{};
}

TEST(WorkerProtocol, LoadedRoundTripsWithEveryInputDtype) {
    Loaded sent{123'456, "onnxruntime 1.20.1", {}};
    for (const DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8, DType::u8, DType::i32,
                              DType::i64, DType::boolean})
        sent.inputs.push_back({std::string("input_") + std::string(to_string(dtype)), dtype, {-1, 3, 224, 224}});
    const Loaded back = round_trip(sent);
    EXPECT_EQ(back.load_ns, 123'456);
    EXPECT_EQ(back.backend_version, "onnxruntime 1.20.1");
    ASSERT_EQ(back.inputs.size(), sent.inputs.size());
    for (std::size_t i = 0; i < sent.inputs.size(); ++i) {
        EXPECT_EQ(back.inputs[i].name, sent.inputs[i].name);
        EXPECT_EQ(back.inputs[i].dtype, sent.inputs[i].dtype) << sent.inputs[i].name;
        EXPECT_EQ(back.inputs[i].shape, sent.inputs[i].shape);
    }
}

TEST(WorkerProtocol, LoadedCarriesTheConversionMetrics) {
    Loaded sent{1, "onnxruntime 1.22.0", {}, {{"int8_output_cosine", 0.9987, "ratio"}, {"int8_top1_agreement", 1, "ratio"}}};
    const Loaded back = round_trip(sent);
    ASSERT_EQ(back.metrics.size(), 2U);
    EXPECT_EQ(back.metrics[0].name, "int8_output_cosine");
    EXPECT_DOUBLE_EQ(back.metrics[0].value, 0.9987);
    EXPECT_EQ(back.metrics[1].unit, "ratio");
}

TEST(WorkerProtocol, SkippedRoundTripsItsReason) {
    EXPECT_EQ(round_trip(Skipped{"no float16 Conv kernel on the CPU"}).reason, "no float16 Conv kernel on the CPU");
    EXPECT_EQ(phase_after(Skipped{}), SamplePhase::teardown);
}

TEST(WorkerProtocol, WarmupDoneRoundTripsUnderTheNameOfWhatItMarks) {
    const WarmupDone sent{42, 1'000'000'007};
    EXPECT_EQ(to_json(sent).at("event"), "warmup_done");
    const WarmupDone back = round_trip(sent);
    EXPECT_EQ(back.iterations, 42);
    EXPECT_EQ(back.elapsed_ns, 1'000'000'007);
}

TEST(WorkerProtocol, MeasuredRoundTrips) {
    for (const bool stopped : {false, true}) {
        const Measured back = round_trip(Measured{9'000'000'000, 5'000'000'000'000, stopped});
        EXPECT_EQ(back.iterations, 9'000'000'000);
        EXPECT_EQ(back.wall_ns, 5'000'000'000'000);
        EXPECT_EQ(back.stopped, stopped);
        EXPECT_EQ(back.convergence, Convergence::fixed);
        EXPECT_EQ(back.stop_reason, "");
    }
    const Measured criterion{10, 20, false, Convergence::not_converged, "stdrel: not converged within stop_timeout 1s"};
    const Measured back = round_trip(criterion);
    EXPECT_EQ(to_json(criterion).at("convergence"), "not_converged");
    EXPECT_EQ(back.convergence, Convergence::not_converged);
    EXPECT_EQ(back.stop_reason, criterion.stop_reason);
}

TEST(WorkerProtocol, MeasuredCarriesTheScenariosFiguresAndSeries) {
    Measured sent{1200, 5'000'000'000, false};
    sent.metrics = {{"scenario_scheduled_queries", 1250, "count"}, {"scenario_peak_qps", 812.5, "qps"}};
    sent.series = {{"find_peak_qps", {1000, 500, 750}}, {"find_peak_passed", {0, 1, 1}}};
    const Measured back = round_trip(sent);
    ASSERT_EQ(back.metrics.size(), 2u);
    EXPECT_EQ(back.metrics[1].name, "scenario_peak_qps");
    EXPECT_EQ(back.metrics[1].value, 812.5);
    EXPECT_EQ(back.metrics[1].unit, "qps");
    ASSERT_EQ(back.series.size(), 2u);
    EXPECT_EQ(back.series[0].name, "find_peak_qps");
    EXPECT_EQ(back.series[0].values, (std::vector<double>{1000, 500, 750}));
}

TEST(WorkerProtocol, LayersRoundTripInTheirOrder) {
    const Layers sent{{{"conv1", "FusedConv", "CPUExecutionProvider", 10, 5'000},
                       {"reorder_ü", "ReorderOutput", "CUDAExecutionProvider", 1, 7, true}},
                      {{"profile_runs", 20, "count"}, {"profile_runtime_over_events", 1.0123, "ratio"}}};
    const Layers back = round_trip(sent);
    EXPECT_EQ(back.layers, sent.layers);
    EXPECT_TRUE(back.layers[1].host_dispatch);
    ASSERT_EQ(back.metrics.size(), 2u);
    EXPECT_EQ(back.metrics[1].name, "profile_runtime_over_events");
    EXPECT_DOUBLE_EQ(back.metrics[1].value, 1.0123);
    EXPECT_EQ(back.metrics[1].unit, "ratio");
    EXPECT_TRUE(round_trip(Layers{}).layers.empty());
}

TEST(WorkerProtocol, PipelineStagesRoundTripInTheirOrder) {
    const PipelineStages sent{{{0, PipelineStage::read, StagePlace::cpu, 10, 20, 5, 8},
                               {0, PipelineStage::infer, StagePlace::gpu, 30, 90, kStageNotMeasured, 8},
                               {1, PipelineStage::nms, StagePlace::cpu, 100, 130, 28, 7}}};
    EXPECT_EQ(round_trip(sent).stages, sent.stages);
    nlohmann::json bad = to_json(Event{sent});
    bad["stage"][1] = "paint";
    EXPECT_THROW(event_from_json(bad), ProtocolError);
    bad = to_json(Event{sent});
    bad["images"].erase(0);
    EXPECT_THROW(event_from_json(bad), ProtocolError);
}

TEST(WorkerProtocol, ErrorRoundTrips) {
    const Error back = round_trip(Error{"warm-up", "CUDA out of memory\n\"quoted\""});
    EXPECT_EQ(back.phase, "warm-up");
    EXPECT_EQ(back.message, "CUDA out of memory\n\"quoted\"");
}

TEST(WorkerProtocol, RequestRoundTripsTheSpecAndModelPath) {
    BenchmarkSpec spec;
    spec.model = "resnet50";
    spec.backend = "torch";
    spec.device = Device{DeviceKind::cuda, 1};
    spec.precision = Precision::bf16;
    spec.batch_size = 32;
    spec.variant = "cuda_graph=true";
    spec.loop.warmup_ns = 1;
    spec.loop.duration_ns = 2;
    spec.timeout_ns = 3;
    spec.seed = 18'446'744'073'709'551'615u;
    spec.backend_options = {{"cuda_graph", "true"}};
    const Request back = request_from_json(nlohmann::json::parse(to_json(Request{spec, "/models/r50.onnx"}).dump()));
    EXPECT_EQ(back.model_path, "/models/r50.onnx");
    EXPECT_EQ(spec_to_json(back.spec), spec_to_json(spec));
}

TEST(WorkerProtocol, BadMessagesNameWhatIsWrong) {
    const auto error_of = [](const char* text) {
        try {
            event_from_json(nlohmann::json::parse(text));
        } catch (const ProtocolError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(error_of(R"({"event":"warmup","iterations":1,"elapsed_ns":2})"), "worker event: unknown event 'warmup'");
    EXPECT_EQ(error_of(R"({"iterations":1})"), "worker event: no field 'event'");
    EXPECT_EQ(error_of(R"([1, 2])"), "worker event: not a JSON object");
    EXPECT_EQ(error_of(R"({"event":"measured","iterations":1,"stopped":false})"),
              "worker event measured: no field 'wall_ns'");
    EXPECT_EQ(error_of(R"({"event":"measured","iterations":1,"wall_ns":1,"stopped":false,"convergence":"maybe",)"
                       R"("stop_reason":""})"),
              "worker event measured: field 'convergence': unknown value 'maybe'");
    EXPECT_NE(error_of(R"({"event":"measured","iterations":"many","wall_ns":1,"stopped":false})")
                  .find("worker event measured: field 'iterations': "),
              std::string::npos);
    EXPECT_EQ(error_of(R"({"event":"loaded","load_ns":1,"backend_version":"",)"
                       R"("inputs":[{"name":"x","dtype":"int4","shape":[1]}]})"),
              "worker event loaded: unknown input dtype 'int4'");
    try {
        request_from_json(nlohmann::json::parse(R"({"spec":{"model":"m"},"model_path":""})"));
        ADD_FAILURE() << "a request without the spec's fields was read";
    } catch (const ProtocolError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("worker request: field 'spec': ", 0), 0u) << e.what();
    }
}

// Warm-up samples end when warm-up does: the event that says so moves the samples to the measure phase.
TEST(WorkerProtocol, TelemetryPhasesFollowTheEvents) {
    EXPECT_EQ(phase_after(Loaded{}), SamplePhase::warmup);
    EXPECT_EQ(phase_after(WarmupDone{}), SamplePhase::measure);
    EXPECT_EQ(phase_after(Measured{}), SamplePhase::teardown);
    EXPECT_EQ(phase_after(Error{}), SamplePhase::teardown);
    EXPECT_EQ(phase_after(Layers{}), std::nullopt) << "the layer profile runs after teardown began";
}

}  // namespace
}  // namespace inferbench::runner::worker_protocol
