// llama.cpp's prompt and generation throughput through the llamacpp backend, in llama-bench's terms:
//   pp512  prompt tokens per second: one llama_decode of a 512-token prompt (batch 1) from an empty cache
//   tg128  generated tokens per second: 128 decode steps of one token each after a 1-token prompt
// on llama-tiny and on a ~100 M-parameter Llama shape defined here (llama-100m), both written by
// models/gguf_writer at the chosen precision (Q8_0 by default), each figure the mean +- standard deviation of
// --reps repetitions after one warm-up. Beside tg128: the decode bound, memory bandwidth / bytes read per step
// (the weights as held, the token embedding table excepted but for one row, plus the KV cache read at the
// step's mean position), where the bandwidth is measured here by one thread reading (summing) a 2 GiB buffer,
// several times the last-level cache; a memcpy of 1 GiB is shown beside it (bytes read + written).
//
//   build/release/bench/llamacpp_decode [--reps 5] [--threads 1] [--precision int8] [--dir DIR]
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backends/llamacpp/llamacpp_backend.hpp"
#include "models/decoder_models.hpp"
#include "models/gguf_writer.hpp"

namespace inferbench {
namespace {

std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

class TimingSink final : public TokenSink {
public:
    void step(std::span<const std::int32_t> /*tokens*/) override { ends.push_back(now_ns()); }
    void step_ended_at(std::int64_t end_ns, std::span<const std::int32_t> /*tokens*/) override { ends.push_back(end_ns); }
    bool stop_requested() const override { return false; }
    std::vector<std::int64_t> ends;
};

struct Stats {
    double mean = 0, sd = 0;
};

Stats stats(const std::vector<double>& v) {
    Stats s;
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    for (const double x : v) s.sd += (x - s.mean) * (x - s.mean);
    s.sd = v.size() > 1 ? std::sqrt(s.sd / static_cast<double>(v.size() - 1)) : 0.0;
    return s;
}

// Bytes per second of one thread summing `bytes` of 64-bit words (best of 3 passes, the first faulting the pages in).
double read_bandwidth(std::size_t bytes) {
    std::vector<std::uint64_t> buffer(bytes / 8, 1);
    double best = 0;
    volatile std::uint64_t sink = 0;
    for (int pass = 0; pass < 4; ++pass) {
        const std::int64_t start = now_ns();
        std::uint64_t sum = 0;
        for (const std::uint64_t w : buffer) sum += w;
        sink = sink + sum;
        if (pass > 0) best = std::max(best, static_cast<double>(bytes) / (static_cast<double>(now_ns() - start) * 1e-9));
    }
    return best;
}

// Bytes read + written per second of memcpy of `bytes` (best of 3).
double copy_bandwidth(std::size_t bytes) {
    std::vector<char> from(bytes, 1), to(bytes, 0);
    double best = 0;
    for (int pass = 0; pass < 3; ++pass) {
        const std::int64_t start = now_ns();
        std::memcpy(to.data(), from.data(), bytes);
        best = std::max(best, 2.0 * static_cast<double>(bytes) / (static_cast<double>(now_ns() - start) * 1e-9));
    }
    return best + static_cast<double>(to[bytes / 2] - 1);  // keeps the copy
}

std::int64_t last_level_cache_bytes() {
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? l3 : std::max<long>(sysconf(_SC_LEVEL2_CACHE_SIZE), 0);
}

BenchmarkSpec spec_for(Precision precision, std::int64_t input, std::int64_t output, std::int64_t threads) {
    BenchmarkSpec spec;
    spec.backend = "llamacpp";
    spec.precision = precision;
    spec.batch_size = 1;
    spec.generation = GenerationSettings{input, output, Sampling::greedy};
    spec.backend_options["threads"] = std::to_string(threads);
    return spec;
}

// CLOCK_MONOTONIC ns of each generation's start and step ends, of `reps` generations (after one warm-up) of `input` + `output` tokens.
std::vector<std::vector<std::int64_t>> run(const std::filesystem::path& model, const BenchmarkSpec& spec,
                                           std::int64_t vocab, int reps) {
    auto backend = make_llamacpp_backend();
    backend->load(model.string(), spec);
    GenerationRequest request{1, spec.generation.input_tokens, spec.generation.output_tokens,
                              generation_prompts(1, spec.generation.input_tokens, vocab, 1), Sampling::greedy, 0};
    backend->prepare_generation(request);
    std::vector<std::vector<std::int64_t>> runs;
    for (int r = -1; r < reps; ++r) {
        TimingSink sink;
        const std::int64_t start = now_ns();
        backend->generate(sink);
        sink.ends.insert(sink.ends.begin(), start);
        if (r >= 0) runs.push_back(sink.ends);
    }
    return runs;
}

// Weight bytes one decode step reads: every tensor as stored, the embedding table one row (or whole when it is
// also the output head).
double weight_bytes_per_step(const DecoderShape& shape, Precision precision) {
    double bytes = 0;
    for (const models::DecoderTensor& t : models::decoder_tensors(shape)) {
        const auto type = models::gguf_tensor_type(t, precision);
        const double whole = static_cast<double>(models::gguf_type_bytes(type, t.element_count()));
        const bool embedding = t.kind == models::DecoderTensor::Kind::embedding;
        bytes += embedding && !shape.tied_embeddings ? whole / static_cast<double>(shape.vocab) : whole;
    }
    return bytes;
}

void bench_model(const std::string& name, const DecoderShape& shape, Precision precision, int reps,
                 std::int64_t threads, const std::filesystem::path& dir, double bandwidth) {
    const auto file = models::decoder_cache_path(dir, name, 42, models::gguf_file_form(precision));
    if (!std::filesystem::exists(file)) models::write_llama_gguf(shape, 42, precision, file);
    std::vector<double> pp, tg;
    for (const auto& ends : run(file, spec_for(precision, 512, 1, threads), shape.vocab, reps))
        pp.push_back(512.0 / (static_cast<double>(ends[1] - ends[0]) * 1e-9));
    for (const auto& ends : run(file, spec_for(precision, 1, 129, threads), shape.vocab, reps))
        tg.push_back(128.0 / (static_cast<double>(ends.back() - ends[1]) * 1e-9));
    const Stats p = stats(pp), t = stats(tg);
    // tg128's steps read the KV cache of positions 1..128: 64.5 on average, float16.
    const double kv_bytes = 64.5 * static_cast<double>(kv_elements_per_token(shape)) * 2.0;
    const double step_bytes = weight_bytes_per_step(shape, precision) + kv_bytes;
    const double params_m = static_cast<double>(parameter_count(shape)) / 1e6;
    const double file_mib = static_cast<double>(std::filesystem::file_size(file)) / 0x1p20;
    // A step whose bytes fit in the last-level cache is not held to DRAM's bandwidth: its "bound" is marked.
    const bool fits_llc = step_bytes < static_cast<double>(last_level_cache_bytes());
    const std::string prec(to_string(precision));
    std::printf("| %-10s | %7.2f M | %8.1f MiB | %-5s | pp512 | %10.1f ± %7.1f |                              |\n",
                name.c_str(), params_m, file_mib, prec.c_str(), p.mean, p.sd);
    std::printf("| %-10s | %7.2f M | %8.1f MiB | %-5s | tg128 | %10.1f ± %7.1f | %8.1f%s (%6.1f MiB/step) |\n",
                name.c_str(), params_m, file_mib, prec.c_str(), t.mean, t.sd, bandwidth / step_bytes,
                fits_llc ? "*" : " ", step_bytes / 0x1p20);
}

}  // namespace
}  // namespace inferbench

int main(int argc, char** argv) {
    using namespace inferbench;
    int reps = 5;
    std::int64_t threads = 1;
    Precision precision = Precision::int8;
    std::filesystem::path dir = std::filesystem::temp_directory_path() / "inferbench-llamacpp-decode";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        if (key == "--reps") reps = std::stoi(value);
        else if (key == "--threads") threads = std::stoll(value);
        else if (key == "--dir") dir = value;
        else if (key == "--precision" && parse_precision(value)) precision = *parse_precision(value);
        else {
            std::fprintf(stderr, "llamacpp_decode: unknown argument %s %s (--reps N --threads N --precision P --dir D)\n",
                         key.c_str(), value.c_str());
            return 2;
        }
    }
    std::filesystem::create_directories(dir);
    const double read_bw = read_bandwidth(std::size_t{2} << 30);  // 2 GiB: several times the LLC
    const double copy_bw = copy_bandwidth(std::size_t{1} << 30);
    std::printf("memory bandwidth, 1 thread: read stream over 2 GiB %.2f GB/s (the bound's); memcpy of 1 GiB %.2f GB/s "
                "(read + written)\n",
                read_bw / 1e9, copy_bw / 1e9);
    std::printf("llama.cpp %s, %lld thread(s), %d repetitions after 1 warm-up each\n\n",
                make_llamacpp_backend()->version().c_str(), static_cast<long long>(threads), reps);
    std::printf("| model      |  params   |     file     | prec  | test  | tokens/s (mean ± sd) | decode bound tokens/s (bytes) |\n");
    std::printf("|------------|-----------|--------------|-------|-------|----------------------|------------------------------|\n");
    const DecoderShape llama_100m{.layers = 8, .hidden = 768, .heads = 12, .kv_heads = 4, .head_dim = 64,
                                  .intermediate = 2048, .vocab = 32000, .max_context = 2048, .tied_embeddings = false,
                                  .rope_theta = 10000.0, .rms_eps = 1e-5};
    bench_model("llama-tiny", models::find_decoder_model("llama-tiny")->shape, precision, reps, threads, dir, read_bw);
    bench_model("llama-100m", llama_100m, precision, reps, threads, dir, read_bw);
    std::printf("\n* the step's bytes fit in the last-level cache (%.0f MiB as the CPU reports it): DRAM's bandwidth "
                "does not bound it\n",
                static_cast<double>(last_level_cache_bytes()) / 0x1p20);
    return 0;
}
