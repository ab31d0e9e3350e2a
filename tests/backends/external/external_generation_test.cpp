// A generating external backend (torch-generate) against a stand-in runner (fake_generate_runner.py, no framework)
// that serves the commands with the real runners/runner_protocol.py: the prompts, the steps with the runner's
// timestamps, stopping, and a runner that breaks the protocol; and the step line's parser.
#include <stdlib.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "backends/external/external_backend.hpp"
#include "common/scratch_dir.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "models/decoder_models.hpp"
#include "models/hf_folder.hpp"

namespace inferbench::external {
namespace {

namespace fs = std::filesystem;

class RecordingSink final : public TokenSink {
public:
    explicit RecordingSink(bool stop = false) : stop_(stop) {}
    void step(std::span<const std::int32_t> /*tokens*/) override { ADD_FAILURE() << "a runner's steps carry their time"; }
    void step_ended_at(std::int64_t end_ns, std::span<const std::int32_t> tokens) override {
        ends.push_back(end_ns);
        tokens_.emplace_back(tokens.begin(), tokens.end());
    }
    bool stop_requested() const override { return stop_; }

    std::vector<std::int64_t> ends;
    std::vector<std::vector<std::int32_t>> tokens_;

private:
    bool stop_;
};

const DecoderShape& tiny() { return models::find_decoder_model("llama-tiny")->shape; }

class GeneratingVariant : public ::testing::Test {
protected:
    void SetUp() override {
        fs::copy_file(INFERBENCH_FAKE_GENERATE_RUNNER, dir_.path() / "torch_generate.py");
        fs::copy_file(INFERBENCH_RUNNERS_DIR "/runner_protocol.py", dir_.path() / "runner_protocol.py");
        setenv("INFERBENCH_RUNNER_DIR", dir_.path().c_str(), 1);
        fs::create_directory(dir_.path() / "model");
        write_file_atomically(dir_.path() / "model" / "config.json", models::llama_hf_config_json(tiny(), Precision::fp32));
    }
    void TearDown() override {
        unsetenv("INFERBENCH_RUNNER_DIR");
        unsetenv("FAKE_GENERATE_SCENARIO");
    }

    BenchmarkSpec spec() const {
        BenchmarkSpec s;
        s.model = (dir_.path() / "model").string();
        s.backend = "torch-generate";
        s.batch_size = 2;
        s.seed = 5;
        s.generation = {.input_tokens = 3, .output_tokens = 4, .sampling = Sampling::greedy};
        s.backend_options = {{"python", INFERBENCH_TEST_PYTHON}};
        return s;
    }
    static GenerationRequest request() { return {2, 3, 4, {10, 11, 12, 20, 21, 22}, Sampling::greedy, 5}; }

    // Loads and prepares with `scenario`, then runs one generation; the error's text, empty when none.
    std::string generate_with(const std::string& scenario, RecordingSink& sink) {
        setenv("FAKE_GENERATE_SCENARIO", scenario.c_str(), 1);
        ExternalBackend backend(find_variant("torch-generate"), {5'000'000'000, 300'000'000});
        try {
            backend.load(spec().model, spec());
            backend.prepare_generation(request());
            backend.generate(sink);
        } catch (const EnvironmentError& e) {
            return e.what();
        }
        return {};
    }

    testing::ScratchDir dir_;
};

std::int32_t next_token(std::int32_t t) { return (t * 31 + 7) % 4096; }

TEST_F(GeneratingVariant, EveryStepReachesTheSinkWithTheRunnersTime) {
    ExternalBackend backend(find_variant("torch-generate"));
    EXPECT_TRUE(backend.capabilities().generates);
    EXPECT_FALSE(backend.capabilities().runs_own_loop);
    EXPECT_EQ(backend.unsupported_reason(spec()), std::nullopt);
    backend.load(spec().model, spec());
    EXPECT_EQ(backend.decoder_info().shape, tiny());
    EXPECT_EQ(backend.decoder_info().weight_bytes, parameter_count(tiny()) * 4);
    backend.prepare_generation(request());
    for (int generation = 0; generation < 2; ++generation) {  // each from the prompts again
        RecordingSink sink;
        const std::int64_t before = monotonic_ns();
        backend.generate(sink);
        ASSERT_EQ(sink.ends.size(), 4u);
        EXPECT_GE(sink.ends.front(), before);
        EXPECT_LE(sink.ends.back(), monotonic_ns());
        EXPECT_TRUE(std::is_sorted(sink.ends.begin(), sink.ends.end()));
        std::vector<std::int32_t> expected = {next_token(12), next_token(22)};
        for (const auto& tokens : sink.tokens_) {
            EXPECT_EQ(tokens, expected);
            expected = {next_token(expected[0]), next_token(expected[1])};
        }
    }
}

TEST_F(GeneratingVariant, TheRequestCarriesTheLengthsAndOnlyGenerativeCellsRun) {
    ExternalBackend backend(find_variant("torch-generate"));
    BenchmarkSpec plain = spec();
    plain.generation = {};
    EXPECT_EQ(backend.unsupported_reason(plain),
              "backend torch-generate runs decoder generation only: give the cell input_tokens and output_tokens");
    BenchmarkSpec gguf = spec();
    gguf.model = "/models/tiny.gguf";
    EXPECT_EQ(backend.unsupported_reason(gguf),
              "backend torch-generate reads a Hugging Face model folder (config.json + model.safetensors) or a zoo "
              "decoder; /models/tiny.gguf is neither");
    BenchmarkSpec zoo = spec();
    zoo.model = "llama-tiny";
    EXPECT_EQ(backend.unsupported_reason(zoo), std::nullopt);
    const auto request = make_request("m", spec());
    EXPECT_EQ(request["generation"], nlohmann::json({{"input_tokens", 3}, {"output_tokens", 4}, {"sampling", "greedy"}}));
    EXPECT_FALSE(make_request("m", plain).contains("generation"));
    const auto prepare = make_prepare_command(GeneratingVariant::request());
    EXPECT_EQ(prepare["prompts"], nlohmann::json({{10, 11, 12}, {20, 21, 22}}));
    EXPECT_EQ(prepare["seed"], 5);
}

TEST_F(GeneratingVariant, ANonLlamaFolderFailsBeforeTheRunnerStarts) {
    fs::remove(dir_.path() / "model" / "config.json");
    write_file_atomically(dir_.path() / "model" / "config.json", R"({"model_type": "gpt2"})");
    ExternalBackend backend(find_variant("torch-generate"));
    try {
        backend.load(spec().model, spec());
        FAIL() << "loaded a gpt2 folder";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("config.json: key \"model_type\" is \"gpt2\""), std::string::npos) << e.what();
    }
}

TEST_F(GeneratingVariant, RunnersThatBreakTheProtocolFailTheGeneration) {
    RecordingSink short_sink;
    EXPECT_EQ(generate_with("short", short_sink),
              "torch-generate runner broke the protocol: 3 steps sent, its generated line says 3, the cell asked for 4");
    RecordingSink clock_sink;
    EXPECT_EQ(generate_with("wall_clock", clock_sink),
              "torch-generate runner broke the protocol: a step's end_ns is not on CLOCK_MONOTONIC "
              "(time.monotonic_ns() in Python)");
    RecordingSink failing_sink;
    const std::string failed = generate_with("fail", failing_sink);
    EXPECT_EQ(failed.rfind("torch-generate runner failed: fake runner: out of memory at step 2 (exit code 1 after 0 of "
                           "4 steps)",
                           0),
              0u)
        << failed;
}

TEST_F(GeneratingVariant, AStopRequestEndsTheGenerationEarly) {
    RecordingSink sink(true);  // SIGTERM at once: the runner ends after its first step
    EXPECT_EQ(generate_with("stop", sink), "");
    EXPECT_EQ(sink.ends.size(), 1u);
}

TEST(StepLine, ParsesTheEndAndOneTokenPerSequence) {
    const RunnerLine line = parse_runner_line("step 123456789 5 0 4095");
    EXPECT_EQ(line.kind, RunnerLine::Kind::step);
    EXPECT_EQ(line.step_end_ns, 123456789);
    EXPECT_EQ(line.step_tokens, (std::vector<std::int32_t>{5, 0, 4095}));
    EXPECT_THROW(parse_runner_line("step 12"), ProtocolError);
    EXPECT_THROW(parse_runner_line("step 12 5 x"), ProtocolError);
    EXPECT_THROW(parse_runner_line("step 1.5 5"), ProtocolError);
    EXPECT_THROW(parse_runner_line("step 12 -3"), ProtocolError);
    EXPECT_EQ(parse_runner_line("stepping through weights").kind, RunnerLine::Kind::text);
    const RunnerLine done = parse_runner_line(R"({"type":"generated","steps":4,"start_ns":7})");
    EXPECT_EQ(done.kind, RunnerLine::Kind::generated);
    EXPECT_EQ(done.generated_steps, 4);
    EXPECT_EQ(done.generated_start_ns, 7);
}

// The real runner on a machine without transformers (Debian has no python3-transformers): a reason to skip.
TEST(TorchGenerateRunner, WithoutTransformersTheCellIsSkippedWithTheReason) {
    setenv("INFERBENCH_RUNNER_DIR", INFERBENCH_RUNNERS_DIR, 1);
    const ExternalBackend backend(find_variant("torch-generate"));
    BenchmarkSpec s;
    s.model = "llama-tiny";
    s.generation = {.input_tokens = 3, .output_tokens = 4, .sampling = Sampling::greedy};
    s.backend_options = {{"python", INFERBENCH_TEST_PYTHON}};
    const auto reason = backend.unsupported_reason(s);
    unsetenv("INFERBENCH_RUNNER_DIR");
    if (!reason) GTEST_SKIP() << "transformers is installed for " INFERBENCH_TEST_PYTHON;
    EXPECT_EQ(*reason, "transformers not importable by " INFERBENCH_TEST_PYTHON
                       "; install PyTorch and transformers (pip install torch transformers; Debian has no "
                       "python3-transformers) or set backend_options.torch-generate.python");
}

}  // namespace
}  // namespace inferbench::external
