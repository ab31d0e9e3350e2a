// What torch.compile left undone, from the counts its runner stored (torch_compile_* metrics) and the reasons
// PyTorch printed into the benchmark's stored output: CUDA graphs that reduce-overhead skipped, graph breaks.
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/metrics/load_metrics.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {
namespace {

constexpr std::size_t kQuotedReasonChars = 160;

// The first line of the stored output that holds `marker`, trimmed and cut to a readable length; empty if none.
std::string first_line_with(std::string_view text, std::string_view marker) {
    const std::size_t at = text.find(marker);
    if (at == std::string_view::npos) return {};
    const std::size_t newline = text.rfind('\n', at);
    const std::size_t begin = newline == std::string_view::npos ? 0 : newline + 1;
    std::string line(text.substr(begin, text.find('\n', at) - begin));
    line.erase(0, line.find_first_not_of(" \t"));
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (line.size() > kQuotedReasonChars) line = line.substr(0, kQuotedReasonChars - 3) + "...";
    return line;
}

std::string plural(double count, std::string_view word) {
    return fmt::format("{:.0f} {}{}", count, word, count == 1 ? "" : "s");
}

}  // namespace

std::vector<Finding> compile_fallbacks(const BenchmarkEvidence& e) {
    std::vector<Finding> out;
    const auto& c = e.compile;
    const std::string& output = e.summary.benchmark.stderr_tail;
    if (c.cudagraph_skips && *c.cudagraph_skips > 0) {
        const std::string said = first_line_with(output, "skipping cudagraphs");
        out.push_back(
            {"compile.cudagraphs_skipped",
             Severity::warning,
             {e.id()},
             fmt::format("torch.compile left {} out{}: those kernels launch one by one from the host, as "
                         "in eager, so small batches stay bound by their launches",
                         plural(*c.cudagraph_skips, "CUDA graph"),
                         said.empty() ? std::string() : fmt::format(" (PyTorch: \"{}\")", said)),
             {{fmt::format("benchmark_metrics.{}", load_metrics::kTorchCompileCudagraphSkips),
               "benchmarks.stderr_tail"},
              std::nullopt,
              {}},
             "remove what PyTorch names (an input mutated in place, a CPU tensor, a dynamic shape), or run "
             "the model as one captured graph: torch-eager or torch-aoti with cuda_graph=true"});
    }
    if (c.graph_breaks && *c.graph_breaks > 0) {
        const std::string said = first_line_with(output, "Graph break");
        const std::string graphs =
            c.graphs && *c.graphs > 0 ? fmt::format("into {} ", plural(*c.graphs, "graph")) : std::string();
        out.push_back({"compile.graph_breaks",
                       Severity::info,
                       {e.id()},
                       fmt::format("torch.compile split the model {}at {}{}: between them Python runs the model's "
                                   "code as in eager, and each graph is launched apart",
                                   graphs, plural(*c.graph_breaks, "graph break"),
                                   said.empty() ? std::string() : fmt::format(" (PyTorch: \"{}\")", said)),
                       {{fmt::format("benchmark_metrics.{}", load_metrics::kTorchCompileGraphBreaks),
                         "benchmarks.stderr_tail"},
                        std::nullopt,
                        {}},
                       "the benchmark's stored output names each break (PyTorch's graph-break log); "
                       "torch.compile(fullgraph=True) makes them errors that point at the code to change"});
    }
    return out;
}

}  // namespace inferbench::findings
