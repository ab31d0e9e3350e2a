// Serving cells through the real CLI against a real llama.cpp server (scripts/build-llama-server.sh): the
// server a cell starts itself (server_command) and one already running (endpoint), every request stored with
// each chunk's arrival, the workload stored and replayed exactly, and what cannot run recorded with its one-line
// reason while the plan goes on. Skipped where llama-server is not built. One thread, 127.0.0.1 only, every
// run bounded in requests and time.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "common/llama_server.hpp"
#include "common/local_http_server.hpp"
#include "core/serving.hpp"
#include "e2e/cli_harness.hpp"
#include "serving/server_process.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

// The server's command with its slots taken from the plan's own arg_slots option.
std::string slots_from_plan(std::string command) {
    const std::string fixed = "--parallel 3";
    command.replace(command.find(fixed), fixed.size(), "--parallel {arg_slots}");
    return command;
}

// A plan of llama-tiny served by llama-server, started per cell, at two concurrency levels.
std::string concurrency_plan() {
    return fmt::format(
        "models: [llama-tiny]\nbackends: [openai]\ninput_tokens: [24]\noutput_tokens: [12]\n"
        "scenario: concurrency\nconcurrency: [1, 3]\nduration: 20s\ntimeout: 3m\n"
        "backend_options:\n  openai:\n    server_command: \"{}\"\n    requests: 9\n    warmup_requests: 2\n"
        "    ttft_bound: 5s\n    tpot_bound: 1s\n    arg_slots: 3\n",
        slots_from_plan(testing::llama_server_command(3, 1024, "llama-tiny")));
}

std::int64_t chunk_tokens(const ServedRequest& request) {
    std::int64_t tokens = 0;
    for (const ServedChunk& chunk : request.chunks) tokens += chunk.tokens > 0 ? chunk.tokens : 0;
    return tokens;
}

TEST(Serving, AConcurrencySweepAgainstLlamaServerStoresEveryRequestAndChunk) {
    INFERBENCH_REQUIRE_LLAMA_SERVER();
    ScratchDir dir;
    dir.write("plan.yaml", concurrency_plan());
    const auto run = dir.run("run plan.yaml --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    std::string fingerprint;
    for (const auto& b : benchmarks) {
        SCOPED_TRACE(b.variant);
        EXPECT_EQ(b.status, BenchmarkStatus::ok) << b.reason;
        EXPECT_NE(b.backend_version.find("llama.cpp"), std::string::npos) << b.backend_version;
        const auto requests = store.served_requests(b.benchmark_id);
        ASSERT_EQ(requests.size(), 11u);  // 2 warm-up + 9 measured
        std::int64_t measured = 0;
        for (const ServedRequest& r : requests) {
            EXPECT_EQ(r.outcome, RequestOutcome::ok) << r.error;
            EXPECT_EQ(r.output_tokens, 12);
            EXPECT_EQ(r.input_tokens, 24);  // token ids: exact lengths whatever the tokenizer
            EXPECT_EQ(chunk_tokens(r), 12);  // one event per token, every one kept with its arrival
            ASSERT_FALSE(r.chunks.empty());
            EXPECT_GE(r.chunks.front().arrival_ns, r.sent_ns);
            EXPECT_LE(r.chunks.back().arrival_ns, r.end_ns);
            EXPECT_GT(r.server_generation_ms, 0.0);
            measured += r.warmup ? 0 : 1;
        }
        EXPECT_EQ(measured, 9);
        EXPECT_EQ(store.iterations(b.benchmark_id).size(), 9u);  // one per ok measured request
        const auto workload = store.serving_workload(b.benchmark_id);
        ASSERT_TRUE(workload.has_value());
        EXPECT_EQ(workload->slos.ttft_ns, 5'000'000'000);
        EXPECT_NE(workload->server_command.find("llama-server"), std::string::npos) << workload->server_command;
        EXPECT_NE(workload->server_command.find(".gguf"), std::string::npos) << workload->server_command;
        EXPECT_NE(workload->server_command.find("--parallel '3'"), std::string::npos) << workload->server_command;
        EXPECT_TRUE(workload->endpoint.starts_with("http://127.0.0.1:")) << workload->endpoint;
        EXPECT_EQ(workload->server_version, b.backend_version);
        if (fingerprint.empty()) fingerprint = workload->fingerprint;
        EXPECT_EQ(workload->fingerprint, fingerprint);  // the same seed: the same requests at each level
    }
    // The stored workload, given back as the workload, sends exactly the same requests.
    const auto stored = store.serving_workload(benchmarks[0].benchmark_id);
    {
        std::ofstream out(dir.file("workload.json"));
        out << stored->json;
    }
    dir.write("replay.yaml", concurrency_plan() + "    workload: workload.json\n");
    const auto replay = dir.run("run replay.yaml --db replay.db --quiet --set concurrency=2");
    ASSERT_EQ(replay.exit_code, 0) << replay.err << replay.out;
    auto again = store::ResultsStore::open(dir.file("replay.db"), store::ResultsStore::Access::read);
    ASSERT_EQ(again.benchmarks().size(), 1u);
    EXPECT_EQ(again.benchmarks()[0].status, BenchmarkStatus::ok) << again.benchmarks()[0].reason;
    EXPECT_EQ(again.serving_workload(again.benchmarks()[0].benchmark_id)->fingerprint, fingerprint);
}

TEST(Serving, ARunningServerFromTheCommandLineAndAnUnreachableOneBesideIt) {
    INFERBENCH_REQUIRE_LLAMA_SERVER();
    testing::LlamaServer server({.parallel = 2, .context = 1024});
    ScratchDir dir;
    const int closed = serving::free_local_port();
    const std::string endpoints = fmt::format("http://127.0.0.1:{},{}", closed, server.base_url());
    const auto run = dir.run(
        "run --model served:llama-tiny --backend openai --set endpoint=" + endpoints +
        " --input-tokens 16 --output-tokens 6 --set scenario=server --set target_qps=20 --set duration=10s"
        " --set backend_options.openai.requests=8 --set backend_options.openai.burstiness=0.5 --db r.db --quiet");
    EXPECT_EQ(run.exit_code, 1) << run.err << run.out;  // one cell failed
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::failed);
    EXPECT_NE(benchmarks[0].reason.find(fmt::format("cannot connect to http://127.0.0.1:{}/v1/models", closed)),
              std::string::npos)
        << benchmarks[0].reason;
    EXPECT_EQ(benchmarks[0].reason.find('\n'), std::string::npos) << benchmarks[0].reason;
    ASSERT_EQ(benchmarks[1].status, BenchmarkStatus::ok) << benchmarks[1].reason;
    const auto requests = store.served_requests(benchmarks[1].benchmark_id);
    std::int64_t measured = 0;
    for (const ServedRequest& r : requests) {
        if (r.warmup) continue;
        ++measured;
        EXPECT_EQ(r.outcome, RequestOutcome::ok) << r.error;
        EXPECT_EQ(r.output_tokens, 6);
        EXPECT_GE(r.sent_ns, r.scheduled_ns);  // open loop: sent at (or after) its arrival
    }
    EXPECT_EQ(measured, 8);
}

TEST(Serving, AServerCommandThatCannotStartFailsItsCellWithItsOutput) {
    ScratchDir dir;
    dir.write("plan.yaml",
              "models: [served:any]\nbackends: [openai]\ninput_tokens: [8]\noutput_tokens: [4]\nduration: 1s\n"
              "backend_options:\n  openai:\n    server_command: \"sh -c 'echo no model here >&2; exit 3'\"\n");
    const auto run = dir.run("run plan.yaml --db r.db --quiet");
    EXPECT_EQ(run.exit_code, 1) << run.err << run.out;
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::failed);
    EXPECT_NE(benchmarks[0].reason.find("server_command ended (exit code 3)"), std::string::npos) << benchmarks[0].reason;
    EXPECT_NE(benchmarks[0].reason.find("no model here"), std::string::npos) << benchmarks[0].reason;
}

TEST(Serving, ACellWithoutAServerIsSkippedWithHowToGiveOne) {
    ScratchDir dir;
    const auto run = dir.run("run --model served:any --backend openai --dry-run");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("set endpoint=URL"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace inferbench

namespace inferbench {
namespace {

// A server of known capacity: one request at a time, each holding it `service` before its first token, then two
// tokens at once. Past its capacity the queue (and TTFT) grows without bound; below it TTFT is the service time.
class OneAtATimeServer {
public:
    explicit OneAtATimeServer(std::chrono::microseconds service)
        : server_([this, service](const testing::HttpRequest& request, const testing::HttpConnection& c) {
              if (request.path == "/v1/models")
                  return c.send(testing::http_answer(200, "OK", "application/json",
                                                     R"({"object":"list","data":[{"id":"one-at-a-time"}]})"));
              if (request.method != "POST") return c.send(testing::http_answer(404, "Not Found", "text/plain", "no"));
              {
                  std::lock_guard lock(busy_);
                  std::this_thread::sleep_for(service);
              }
              const std::string token = R"(data: {"choices":[{"text":"x","index":0,"finish_reason":null}]})" "\n\n";
              return c.send(testing::event_stream_headers()) && c.send_chunk(token) && c.send_chunk(token) &&
                     c.send_chunk(R"(data: {"choices":[{"text":"","index":0,"finish_reason":"length"}],)"
                                  R"("usage":{"prompt_tokens":8,"completion_tokens":2}})" "\n\n") &&
                     c.send_chunk("data: [DONE]\n\n") && c.send_chunk("");
          }) {}
    std::string url() const { return server_.url(); }

private:
    std::mutex busy_;
    testing::LocalHttpServer server_;
};

TEST(Serving, FindPeakSearchesTheHighestRateMeetingTheBoundsAndMeasuresTheCellThere) {
    // Capacity 500 requests/s (2 ms each); p99 TTFT within 20 ms holds below it and fails well above it.
    OneAtATimeServer server(std::chrono::microseconds(2000));
    ScratchDir dir;
    const auto run = dir.run(
        "run --model served:one-at-a-time --backend openai --set endpoint=" + server.url() +
        " --input-tokens 8 --output-tokens 2 --set scenario=server --set find_peak=true --set target_qps=200"
        " --set duration=1s --set backend_options.openai.ttft_bound=20ms --set backend_options.openai.prompt_form=text"
        " --set timeout=5m --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    ASSERT_EQ(benchmarks[0].status, BenchmarkStatus::ok) << benchmarks[0].reason;
    double peak = 0;
    for (const auto& m : store.metrics(benchmarks[0].benchmark_id))
        if (m.name == "server_peak_qps") peak = m.value;
    EXPECT_GT(peak, 50.0);   // well below capacity passes
    EXPECT_LT(peak, 1000.0);  // twice the capacity cannot
    std::vector<double> rates, passed;
    for (const auto& s : store.series(benchmarks[0].benchmark_id)) {
        if (s.name == "find_peak_qps") rates = s.values;
        if (s.name == "find_peak_passed") passed = s.values;
    }
    ASSERT_GE(rates.size(), 2u);
    ASSERT_EQ(passed.size(), rates.size());
    EXPECT_NE(std::count(passed.begin(), passed.end(), 0.0), 0) << "a step above the peak failed";
    // The cell's own requests are those of the run at the peak, every one answered.
    std::int64_t measured = 0;
    for (const ServedRequest& r : store.served_requests(benchmarks[0].benchmark_id)) {
        if (r.warmup) continue;
        ++measured;
        EXPECT_EQ(r.outcome, RequestOutcome::ok) << r.error;
    }
    EXPECT_GT(measured, 0);
}

}  // namespace
}  // namespace inferbench
