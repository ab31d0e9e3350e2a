// The serving client's own ceiling: how many requests and streamed chunks per second the StreamClient takes
// in, every chunk timestamped, when the server costs nothing. A local server in this process (a thread per
// connection) answers each request with EVENTS token events at once, one write each, kept alive; the client
// keeps CONCURRENCY requests in flight on as many connections for SECONDS. The client thread's CPU time per
// chunk is measured, and so is the clock read each chunk's timestamp costs (core/clock's monotonic_ns: at
// most one read per chunk, one per socket read shared by the events it completes). Server and client share
// the machine's cores, so the figures are a floor of what the client alone could take.
//
//   build/release/bench/openai_client_ceiling [SECONDS=2] [EVENTS=64] [CONCURRENCY=1,8,64]
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/local_http_server.hpp"
#include "core/clock.hpp"
#include "serving/http_stream_client.hpp"

namespace inferbench {
namespace {

using testing::HttpConnection;
using testing::HttpRequest;

std::int64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string one, five, fifteen;
    in >> one >> five >> fifteen;
    return one + " " + five + " " + fifteen;
}

// The cost of one monotonic_ns() read: the fastest of 20 rounds' means of 250 k reads (a round the kernel
// preempted on a busy host is slower, not the clock).
double clock_read_ns() {
    constexpr int kRounds = 20;
    constexpr int kReads = 250'000;
    double fastest = 1e9;
    std::int64_t sink = 0;
    for (int round = 0; round < kRounds; ++round) {
        const std::int64_t start = monotonic_ns();
        for (int i = 0; i < kReads; ++i) sink += monotonic_ns();
        fastest = std::min(fastest, static_cast<double>(monotonic_ns() - start) / kReads);
    }
    if (sink == 0) std::abort();  // keeps the reads
    return fastest;
}

bool stream_events(const HttpConnection& c, int events) {
    static const std::string kToken = "data: {\"choices\":[{\"text\":\"x\",\"index\":0,\"finish_reason\":null}]}\n\n";
    if (!c.send(testing::event_stream_headers())) return false;
    for (int i = 0; i < events; ++i)
        if (!c.send_chunk(kToken)) return false;
    c.send_chunk(
        fmt::format("data: {{\"choices\":[{{\"text\":\"\",\"index\":0,\"finish_reason\":\"length\"}}],"
                    "\"usage\":{{\"prompt_tokens\":4,\"completion_tokens\":{}}}}}\n\n",
                    events));
    c.send_chunk("data: [DONE]\n\n");
    return c.send_chunk("");
}

struct LevelFigures {
    std::int64_t requests = 0;
    std::int64_t failed = 0;
    std::int64_t chunks = 0;
    std::int64_t wall_ns = 0;
    std::int64_t client_cpu_ns = 0;
};

LevelFigures run_level(const std::string& url, std::size_t concurrency, int events, double seconds) {
    serving::StreamClient client({.base_url = url, .model = "bench"}, concurrency);
    PlannedRequest request;
    request.prompt_token_ids = {1, 2, 3, 4};
    request.input_tokens = 4;
    request.max_tokens = events;
    LevelFigures figures;
    const std::int64_t start = monotonic_ns();
    const std::int64_t cpu_start = thread_cpu_ns();
    const std::int64_t stop = start + static_cast<std::int64_t>(seconds * 1e9);
    std::int64_t index = 0;
    while (monotonic_ns() < stop) {
        while (client.in_flight() < concurrency) {
            request.index = index++;
            client.send(request, monotonic_ns(), false);
        }
        for (const ServedRequest& served : client.poll(10'000'000)) {
            ++figures.requests;
            figures.failed += served.outcome != RequestOutcome::ok;
            figures.chunks += static_cast<std::int64_t>(served.chunks.size());
        }
    }
    figures.wall_ns = monotonic_ns() - start;
    figures.client_cpu_ns = thread_cpu_ns() - cpu_start;
    client.cancel_all();  // the requests still in flight are not counted
    return figures;
}

std::vector<std::size_t> parse_levels(const char* text) {
    std::vector<std::size_t> levels;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) levels.push_back(std::stoul(item));
    return levels;
}

}  // namespace
}  // namespace inferbench

int main(int argc, char** argv) {
    using namespace inferbench;
    const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
    const int events = argc > 2 ? std::atoi(argv[2]) : 64;
    const std::vector<std::size_t> levels = parse_levels(argc > 3 ? argv[3] : "1,8,64");
    if (seconds <= 0 || events <= 0 || levels.empty()) {
        fmt::print(stderr, "usage: openai_client_ceiling [SECONDS=2] [EVENTS=64] [CONCURRENCY=1,8,64]\n");
        return 2;
    }
    testing::LocalHttpServer server(
        [events](const HttpRequest&, const HttpConnection& c) { return stream_events(c, events); });
    const double clock_ns = clock_read_ns();
    fmt::print("openai_client_ceiling: {} token events per request, {} s per level, load average {}\n", events, seconds,
               load_average());
    fmt::print("{:>11} {:>11} {:>11} {:>9} {:>17} {:>20}\n", "concurrency", "requests/s", "chunks/s", "failed",
               "client CPU/chunk", "clock read/chunk");
    for (const std::size_t concurrency : levels) {
        const LevelFigures f = run_level(server.url(), concurrency, events, seconds);
        const double wall_s = static_cast<double>(f.wall_ns) / 1e9;
        const double cpu_per_chunk =
            f.chunks > 0 ? static_cast<double>(f.client_cpu_ns) / static_cast<double>(f.chunks) : 0;
        fmt::print("{:>11} {:>11.0f} {:>11.0f} {:>9} {:>14.0f} ns {:>10.1f} ns ({:.1f}%)\n", concurrency,
                   static_cast<double>(f.requests) / wall_s, static_cast<double>(f.chunks) / wall_s, f.failed,
                   cpu_per_chunk, clock_ns, cpu_per_chunk > 0 ? 100 * clock_ns / cpu_per_chunk : 0);
    }
    fmt::print(
        "clock read: core/clock monotonic_ns, the fastest of 20 rounds of 250 k reads; at most one read per chunk (one "
        "per socket "
        "read, shared by the events it completes)\n");
    return 0;
}
