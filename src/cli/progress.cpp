#include "cli/progress.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "core/text_checks.hpp"
#include "core/units.hpp"
#include "report/table.hpp"

namespace inferbench::cli {
namespace {

std::string clock_text(std::int64_t ns) {
    if (ns < 0) return "?";
    const std::int64_t s = ns / 1'000'000'000;
    return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string outcome_text(const store::BenchmarkRecord& r) {
    if (r.status == BenchmarkStatus::ok)
        return r.convergence == Convergence::not_converged ? fmt::format("ok, {}", r.stop_reason)
                                                           : std::string(to_string(r.status));
    return fmt::format("{}: {}", to_string(r.status), r.reason);
}

}  // namespace

ProgressPrinter::ProgressPrinter(std::FILE* out) : out_(out), live_(isatty(fileno(out)) != 0) {}

void ProgressPrinter::operator()(const runner::ProgressEvent& e) {
    if (!e.lane.empty()) return lanes_event(e);
    std::string head = fmt::format("[{}/{}] {}", e.index, e.total, printable_text(e.spec->label()));
    if (e.repeats > 1) head += fmt::format(" (repeat {}/{})", e.repeat + 1, e.repeats);
    const std::string times = fmt::format("elapsed {}, ETA {}", clock_text(e.elapsed_ns), clock_text(e.eta_ns));
    const std::size_t width = report::terminal_width(fileno(out_));
    // A rewritten line longer than the terminal wraps, and \r then redraws only its last part.
    const auto live_line = [&](const std::string& text) {
        fmt::print(out_, "\r\033[K{}", report::fit_line(text, width > 1 ? width - 1 : 1));
    };
    switch (e.kind) {
        case runner::ProgressEvent::Kind::started:
            if (live_) live_line(fmt::format("{}  starting  ({})", head, times));
            break;
        case runner::ProgressEvent::Kind::tick:
            if (live_) live_line(fmt::format("{}  {} iterations  ({})", head, e.iterations_so_far, times));
            break;
        case runner::ProgressEvent::Kind::finished:
            // Kept whole (a failure's reason is read once the run is over), wrapped to the width.
            fmt::print(out_, "{}{}", live_ ? "\r\033[K" : "",
                       report::wrap_paragraph(fmt::format("{}  {}  ({})", head, outcome_text(*e.record), times), width));
            break;
    }
    std::fflush(out_);
}

// One bracket per device on the live line; a finished benchmark's line names its device and its place in the lane.
void ProgressPrinter::lanes_event(const runner::ProgressEvent& e) {
    std::string head = fmt::format("{} {}/{} {}", e.lane, e.lane_index, e.lane_total, printable_text(e.spec->label()));
    if (e.repeats > 1) head += fmt::format(" (repeat {}/{})", e.repeat + 1, e.repeats);
    const std::string times = fmt::format("elapsed {}, ETA {}", clock_text(e.elapsed_ns), clock_text(e.eta_ns));
    const std::size_t width = report::terminal_width(fileno(out_));
    switch (e.kind) {
        case runner::ProgressEvent::Kind::started: lanes_[e.lane] = head; break;
        case runner::ProgressEvent::Kind::tick: lanes_[e.lane] = fmt::format("{} {} it", head, e.iterations_so_far); break;
        case runner::ProgressEvent::Kind::finished:
            lanes_[e.lane] = e.lane_index == e.lane_total ? fmt::format("{} done", e.lane) : head;
            fmt::print(out_, "{}{}", live_ ? "\r\033[K" : "",
                       report::wrap_paragraph(fmt::format("[{}]  {}  ({} of {} done, {})", head, outcome_text(*e.record),
                                                          e.index, e.total, times),
                                              width));
            break;
    }
    if (live_) {
        std::string line;
        for (const auto& [lane, text] : lanes_) line += fmt::format("[{}] ", text);
        line += fmt::format(" ({})", times);
        fmt::print(out_, "\r\033[K{}", report::fit_line(line, width > 1 ? width - 1 : 1));
    }
    std::fflush(out_);
}

}  // namespace inferbench::cli
