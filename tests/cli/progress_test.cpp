// The progress of a per_device run: on a terminal one live line with a bracket per device, and a line kept for each
// finished benchmark naming its device and its place in the lane; elsewhere the kept lines alone.
#include <fcntl.h>
#include <pty.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/progress.hpp"

namespace inferbench::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

BenchmarkSpec cell_on(Device device) {
    BenchmarkSpec spec;
    spec.model = "null";
    spec.backend = "null";
    spec.device = device;
    return spec;
}

// The events of two lanes: cuda:0 with two benchmarks, cuda:1 with one; cuda:0's first finishes.
void two_lanes(ProgressPrinter& print, const store::BenchmarkRecord& ok) {
    const BenchmarkSpec gpu0 = cell_on({DeviceKind::cuda, 0}), gpu1 = cell_on({DeviceKind::cuda, 1});
    using Kind = runner::ProgressEvent::Kind;
    const auto event = [](Kind kind, const BenchmarkSpec& spec, const char* lane, std::size_t k, std::size_t n) {
        runner::ProgressEvent e;
        e.kind = kind;
        e.spec = &spec;
        e.total = 3;
        e.lane = lane;
        e.lane_index = k;
        e.lane_total = n;
        return e;
    };
    print(event(Kind::started, gpu0, "cuda:0", 1, 2));
    print(event(Kind::started, gpu1, "cuda:1", 1, 1));
    auto tick = event(Kind::tick, gpu0, "cuda:0", 1, 2);
    tick.iterations_so_far = 120;
    print(tick);
    auto done = event(Kind::finished, gpu0, "cuda:0", 1, 2);
    done.index = 1;
    done.record = &ok;
    print(done);
}

TEST(Progress, OnATerminalABracketPerDevice) {
    int master = -1, slave = -1;
    winsize size{};
    size.ws_col = 200;
    ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, &size), 0);
    std::FILE* out = fdopen(slave, "w");
    ASSERT_NE(out, nullptr);
    store::BenchmarkRecord ok;
    ok.status = BenchmarkStatus::ok;
    ok.convergence = Convergence::fixed;
    {
        ProgressPrinter print(out);
        two_lanes(print, ok);
    }
    std::fclose(out);
    fcntl(master, F_SETFL, O_NONBLOCK);
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = read(master, buffer, sizeof(buffer))) > 0;) text.append(buffer, static_cast<std::size_t>(n));
    close(master);
    EXPECT_THAT(text, HasSubstr("[cuda:0 1/2 null null cuda:0 fp32 b1 120 it] [cuda:1 1/1 null null cuda:1 fp32 b1]"));
    EXPECT_THAT(text, HasSubstr("[cuda:0 1/2 null null cuda:0 fp32 b1]  ok  (1 of 3 done"));
}

TEST(Progress, ElsewhereTheFinishedLinesAlone) {
    std::FILE* out = std::tmpfile();
    ASSERT_NE(out, nullptr);
    store::BenchmarkRecord ok;
    ok.status = BenchmarkStatus::ok;
    ok.convergence = Convergence::fixed;
    {
        ProgressPrinter print(out);
        two_lanes(print, ok);
    }
    std::rewind(out);
    std::string text;
    for (int c; (c = std::fgetc(out)) != EOF;) text.push_back(static_cast<char>(c));
    std::fclose(out);
    EXPECT_EQ(text, "[cuda:0 1/2 null null cuda:0 fp32 b1]  ok  (1 of 3 done, elapsed 0:00, ETA ?)\n");
    EXPECT_THAT(text, Not(HasSubstr("it]")));
}

}  // namespace
}  // namespace inferbench::cli
