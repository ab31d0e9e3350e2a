// The llamacpp backend on llama.cpp itself (scripts/fetch-llama-cpp.sh), over GGUF files of models/gguf_writer.
#include <gtest/gtest.h>

#ifdef INFERBENCH_HAVE_LLAMA_CPP

#include <dlfcn.h>

#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "backends/llamacpp/llamacpp_backend.hpp"
#include "common/llama_reference.hpp"
#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "models/decoder_models.hpp"
#include "models/gguf_writer.hpp"

namespace inferbench {
namespace {

constexpr std::uint64_t kModelSeed = 42;

const DecoderShape& tiny() { return models::find_decoder_model("llama-tiny")->shape; }

class RecordingSink final : public TokenSink {
public:
    void step(std::span<const std::int32_t> tokens) override { steps.emplace_back(tokens.begin(), tokens.end()); }
    void step_ended_at(std::int64_t /*end_ns*/, std::span<const std::int32_t> tokens) override { step(tokens); }
    bool stop_requested() const override { return false; }
    // Sequence s's tokens, one per step.
    std::vector<std::int32_t> sequence(std::size_t s) const {
        std::vector<std::int32_t> out;
        for (const auto& step : steps) out.push_back(step.at(s));
        return out;
    }
    std::vector<std::vector<std::int32_t>> steps;
};

BenchmarkSpec generative_spec(Precision precision, std::int64_t batch, std::int64_t input, std::int64_t output) {
    BenchmarkSpec spec;
    spec.backend = "llamacpp";
    spec.precision = precision;
    spec.batch_size = batch;
    spec.generation = GenerationSettings{input, output, Sampling::greedy};
    return spec;
}

GenerationRequest request_for(const BenchmarkSpec& spec, std::vector<std::int32_t> prompts) {
    GenerationRequest r;
    r.batch = spec.batch_size;
    r.input_tokens = spec.generation.input_tokens;
    r.output_tokens = spec.generation.output_tokens;
    r.prompts = std::move(prompts);
    r.sampling = spec.generation.sampling;
    r.seed = 7;
    return r;
}

class LlamaCppBackendTest : public ::testing::Test {
protected:
    std::filesystem::path model(Precision precision) {
        const auto file = dir_.path() / fmt::format("tiny-{}.gguf", to_string(precision));
        if (!std::filesystem::exists(file)) models::write_llama_gguf(tiny(), kModelSeed, precision, file);
        return file;
    }
    RecordingSink run(Backend& backend, const BenchmarkSpec& spec, const std::vector<std::int32_t>& prompts) {
        backend.load(model(spec.precision).string(), spec);
        backend.prepare_generation(request_for(spec, prompts));
        RecordingSink sink;
        backend.generate(sink);
        return sink;
    }
    testing::ScratchDir dir_;
};

TEST_F(LlamaCppBackendTest, EveryPrecisionLoadsAndGeneratesEveryStep) {
    std::map<Precision, std::int64_t> weight_bytes;
    for (const Precision p : {Precision::fp32, Precision::fp16, Precision::bf16, Precision::int8, Precision::int4}) {
        auto backend = make_llamacpp_backend();
        const BenchmarkSpec spec = generative_spec(p, 2, 12, 6);
        const RecordingSink sink = run(*backend, spec, generation_prompts(2, 12, tiny().vocab, 5));
        ASSERT_EQ(sink.steps.size(), 6U) << to_string(p);
        for (const auto& step : sink.steps) {
            ASSERT_EQ(step.size(), 2U);
            for (const std::int32_t t : step) EXPECT_TRUE(t >= 0 && t < tiny().vocab) << t;
        }
        const DecoderInfo info = backend->decoder_info();
        EXPECT_EQ(info.shape, tiny()) << to_string(p);
        EXPECT_EQ(info.architecture, "llama");
        EXPECT_EQ(info.kv_dtype, p == Precision::fp32 ? DType::f32 : DType::f16);
        weight_bytes[p] = info.weight_bytes;
    }
    // The weights as llama.cpp holds them: 4, 2, 2, 34/32 and 18/32 bytes per weight (norms float32).
    EXPECT_NEAR(static_cast<double>(weight_bytes[Precision::fp32]), 4.0 * static_cast<double>(parameter_count(tiny())), 1e3);
    EXPECT_EQ(weight_bytes[Precision::fp16], weight_bytes[Precision::bf16]);
    EXPECT_LT(weight_bytes[Precision::int8], weight_bytes[Precision::fp16]);
    EXPECT_LT(weight_bytes[Precision::int4], weight_bytes[Precision::int8]);
}

TEST_F(LlamaCppBackendTest, RowsOfPartialBlocksLoadAsF16BesideQuantizedOnes) {
    // hidden 80: no matrix with 80 columns is whole Q4_0 blocks (F16); the down projection's 96 columns are.
    const DecoderShape odd{.layers = 2, .hidden = 80, .heads = 2, .kv_heads = 1, .head_dim = 40, .intermediate = 96,
                           .vocab = 300, .max_context = 128, .tied_embeddings = false, .rope_theta = 10000.0,
                           .rms_eps = 1e-5};
    const auto file = dir_.path() / "odd-int4.gguf";
    models::write_llama_gguf(odd, kModelSeed, Precision::int4, file);
    auto backend = make_llamacpp_backend();
    const BenchmarkSpec spec = generative_spec(Precision::int4, 1, 8, 4);
    backend->load(file.string(), spec);
    backend->prepare_generation(request_for(spec, generation_prompts(1, 8, odd.vocab, 2)));
    RecordingSink sink;
    backend->generate(sink);
    EXPECT_EQ(sink.steps.size(), 4U);
    EXPECT_EQ(backend->decoder_info().shape, odd);
}

TEST_F(LlamaCppBackendTest, Fp32GreedyTokensEqualTheReference) {
    const std::int64_t batch = 2, input = 16, output = 8;
    const std::vector<std::int32_t> prompts = generation_prompts(batch, input, tiny().vocab, 11);
    auto backend = make_llamacpp_backend();
    const RecordingSink sink = run(*backend, generative_spec(Precision::fp32, batch, input, output), prompts);
    const testing::LlamaReference reference(tiny(), kModelSeed);
    for (std::int64_t s = 0; s < batch; ++s) {
        const auto prompt = std::span(prompts).subspan(static_cast<std::size_t>(s * input), static_cast<std::size_t>(input));
        const testing::ReferenceGeneration expected = reference.greedy(prompt, output);
        ASSERT_GT(expected.smallest_margin, 1e-4) << "the reference's choice is too close to call in float32";
        EXPECT_EQ(sink.sequence(static_cast<std::size_t>(s)), expected.tokens) << "sequence " << s;
    }
}

TEST_F(LlamaCppBackendTest, IdenticalPromptsGiveIdenticalTokensAndRunsAgree) {
    std::vector<std::int32_t> prompts = generation_prompts(1, 10, tiny().vocab, 3);
    prompts.insert(prompts.end(), prompts.begin(), prompts.end());
    auto backend = make_llamacpp_backend();
    const BenchmarkSpec spec = generative_spec(Precision::int8, 2, 10, 12);
    const RecordingSink first = run(*backend, spec, prompts);
    EXPECT_EQ(first.sequence(0), first.sequence(1));
    RecordingSink second;
    backend->generate(second);  // from an empty cache again
    EXPECT_EQ(first.steps, second.steps);
}

TEST_F(LlamaCppBackendTest, ASecondLoadReplacesTheFirst) {
    auto backend = make_llamacpp_backend();
    const std::vector<std::int32_t> prompts = generation_prompts(1, 8, tiny().vocab, 4);
    const RecordingSink int8 = run(*backend, generative_spec(Precision::int8, 1, 8, 5), prompts);
    const RecordingSink fp32 = run(*backend, generative_spec(Precision::fp32, 1, 8, 5), prompts);
    EXPECT_EQ(backend->decoder_info().kv_dtype, DType::f32);
    auto fresh = make_llamacpp_backend();
    EXPECT_EQ(run(*fresh, generative_spec(Precision::fp32, 1, 8, 5), prompts).steps, fp32.steps);
    EXPECT_EQ(int8.steps.size(), 5U);
}

TEST_F(LlamaCppBackendTest, SeededSamplingRepeatsWithItsSeed) {
    BenchmarkSpec spec = generative_spec(Precision::fp32, 1, 8, 16);
    spec.generation.sampling = Sampling::seeded;
    auto backend = make_llamacpp_backend();
    const RecordingSink first = run(*backend, spec, generation_prompts(1, 8, tiny().vocab, 9));
    RecordingSink second;
    backend->generate(second);
    EXPECT_EQ(first.steps, second.steps);
}

TEST_F(LlamaCppBackendTest, ATruncatedFileIsOneErrorNamingIt) {
    for (const std::uintmax_t size : {std::uintmax_t{30'000}, std::uintmax_t{1'000'000}}) {  // header, tensor data
        const auto file = dir_.path() / "cut.gguf";
        std::filesystem::copy_file(model(Precision::int8), file, std::filesystem::copy_options::overwrite_existing);
        std::filesystem::resize_file(file, size);
        auto backend = make_llamacpp_backend();
        try {
            backend->load(file.string(), generative_spec(Precision::int8, 1, 8, 8));
            FAIL() << "a truncated file loaded";
        } catch (const UserError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(file.string()), std::string::npos) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
    }
}

TEST_F(LlamaCppBackendTest, AContextLongerThanTheModelsIsRefused) {
    auto backend = make_llamacpp_backend();
    const BenchmarkSpec spec = generative_spec(Precision::int4, 1, tiny().max_context, 8);
    try {
        backend->load(model(Precision::int4).string(), spec);
        FAIL() << "a context longer than the model's loaded";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("longer than the model's context of 4096 tokens"), std::string::npos)
            << e.what();
    }
}

TEST_F(LlamaCppBackendTest, AnUnknownOptionIsOneErrorBeforeTheModelLoads) {
    auto backend = make_llamacpp_backend();
    BenchmarkSpec spec = generative_spec(Precision::int8, 1, 8, 8);
    spec.backend_options["thread"] = "2";
    try {
        backend->load((dir_.path() / "absent.gguf").string(), spec);
        FAIL() << "an unknown option was taken";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("thread"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find("absent.gguf"), std::string::npos) << e.what();
    }
}

TEST_F(LlamaCppBackendTest, AKvCacheBeyondMemoryIsOutOfMemory) {
    auto backend = make_llamacpp_backend();
    // 65536 sequences of 4096 tokens, 512 float32 keys and values per token: 512 GiB.
    const BenchmarkSpec spec = generative_spec(Precision::fp32, 65536, 2048, 2048);
    try {
        backend->load(model(Precision::fp32).string(), spec);
        FAIL() << "a KV cache larger than memory was made";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
    }
}

TEST(LlamaCppBackend, RefusesCellsThatAreNotGenerative) {
    auto backend = make_llamacpp_backend();
    BenchmarkSpec spec = generative_spec(Precision::fp32, 1, 0, 0);
    spec.model = "model.gguf";
    const auto reason = backend->unsupported_reason(spec);
    ASSERT_TRUE(reason.has_value());
    EXPECT_NE(reason->find("decoder language models only"), std::string::npos) << *reason;
    spec.generation = GenerationSettings{8, 8, Sampling::greedy};
    EXPECT_EQ(backend->unsupported_reason(spec), std::nullopt);
    spec.precision = Precision::fp8;
    EXPECT_TRUE(backend->unsupported_reason(spec).has_value());
}

TEST(LlamaCppModule, ExportsTheBackendAtThisApiVersion) {
    void* handle = dlopen(INFERBENCH_LLAMACPP_MODULE, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    const auto entry = reinterpret_cast<inferbench_backend_module_fn>(dlsym(handle, INFERBENCH_BACKEND_ENTRY_POINT));
    ASSERT_NE(entry, nullptr);
    const BackendModule* module = entry();
    EXPECT_EQ(module->api_version, kBackendApiVersion);
    EXPECT_STREQ(module->name, "llamacpp");
    const std::unique_ptr<Backend> backend(module->create());
    const Capabilities caps = backend->capabilities();
    EXPECT_TRUE(caps.generates);
    EXPECT_EQ(caps.model_formats, std::vector<std::string>{"gguf"});
    EXPECT_EQ(caps.devices.front(), DeviceKind::cpu);
    EXPECT_EQ(backend->options().at(0).name, "threads");
    EXPECT_EQ(backend->options().at(0).default_value, "1");
}

TEST(LlamaCppContextPlan, HoldsEverySequenceAndTheWholePrefill) {
    const llamacpp::ContextPlan plan = llamacpp::plan_context(4, GenerationSettings{128, 32, Sampling::greedy});
    EXPECT_EQ(plan.tokens_per_sequence, 160);
    EXPECT_EQ(plan.n_seq_max, 4);
    EXPECT_EQ(plan.n_ctx, 640);
    EXPECT_EQ(plan.n_batch, 512);
    EXPECT_EQ(llamacpp::context_problem(plan, 160), std::nullopt);
    EXPECT_TRUE(llamacpp::context_problem(plan, 159).has_value());
    EXPECT_EQ(llamacpp::kv_cache_bytes(plan, 1024, 2), 640 * 1024 * 2);
}

}  // namespace
}  // namespace inferbench

#else

TEST(LlamaCppBackend, NeedsLlamaCpp) {
    GTEST_SKIP() << "llama.cpp was not found at configure time: run scripts/fetch-llama-cpp.sh and reconfigure";
}

#endif
