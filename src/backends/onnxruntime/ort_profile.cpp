#include "backends/onnxruntime/ort_profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/metrics/profile_metrics.hpp"
#include "core/statistics/statistics.hpp"

namespace inferbench::ort_profile {
namespace {

constexpr std::string_view kKernelSuffix = "_kernel_time";
constexpr std::int64_t kNsPerUs = 1000;

// The bulky per-event arguments nothing here reads (shapes, thread-pool statistics): dropped while
// parsing, so that a long profile does not become a large document in memory.
bool kept(int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (event != nlohmann::json::parse_event_t::key) return true;
    const auto& key = parsed.get_ref<const std::string&>();
    return key != "thread_scheduling_stats" && key != "input_type_shape" && key != "output_type_shape";
}

// A time field (microseconds: whole numbers as ONNX Runtime writes them, fractions accepted) in ns.
std::int64_t nanoseconds(const nlohmann::json& event, const char* field, std::size_t index, std::string_view source) {
    const auto it = event.find(field);
    if (it == event.end() || !it->is_number())
        throw std::runtime_error(
            fmt::format("ONNX Runtime profile {}: event {} has no numeric \"{}\"", source, index, field));
    if (it->is_number_float()) return std::llround(it->get<double>() * static_cast<double>(kNsPerUs));
    return it->get<std::int64_t>() * kNsPerUs;
}

std::string text_field(const nlohmann::json& object, const char* field) {
    const auto it = object.find(field);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

nlohmann::json parse_events(std::string_view json, std::string_view source) {
    nlohmann::json events;
    try {
        events = nlohmann::json::parse(json.begin(), json.end(), kept);
    } catch (const nlohmann::json::parse_error& e) {
        throw std::runtime_error(fmt::format("ONNX Runtime profile {} is not valid JSON: {}", source, e.what()));
    }
    if (!events.is_array())
        throw std::runtime_error(fmt::format("ONNX Runtime profile {} is not a JSON array of trace events", source));
    return events;
}

// Every run's "model_run" event as (start, end), ns on the profile's clock, in the order the runs started.
std::vector<std::pair<std::int64_t, std::int64_t>> run_windows(const nlohmann::json& events, std::string_view source) {
    std::vector<std::pair<std::int64_t, std::int64_t>> runs;
    for (std::size_t i = 0; i < events.size(); ++i) {
        const auto& e = events[i];
        if (!e.is_object() || text_field(e, "cat") != "Session" || text_field(e, "name") != "model_run") continue;
        const std::int64_t ts = nanoseconds(e, "ts", i, source);
        runs.emplace_back(ts, ts + nanoseconds(e, "dur", i, source));
    }
    std::sort(runs.begin(), runs.end());
    return runs;
}

// Where the first `skip_runs` runs end (ns on the profile's clock): node events before it are skipped.
std::int64_t warmup_end(const nlohmann::json& events, std::string_view source, int skip_runs) {
    const auto runs = run_windows(events, source);
    if (skip_runs <= 0) return std::numeric_limits<std::int64_t>::min();
    if (runs.size() <= static_cast<std::size_t>(skip_runs))
        throw std::runtime_error(
            fmt::format("ONNX Runtime profile {} holds {} run(s) (\"model_run\" events); "
                        "{} warm-up run(s) and at least one profiled run were expected",
                        source, runs.size(), skip_runs));
    return runs[static_cast<std::size_t>(skip_runs) - 1].second;
}

}  // namespace

std::vector<std::int64_t> run_times(std::string_view json, std::string_view source) {
    std::vector<std::int64_t> durations;
    for (const auto& [start, end] : run_windows(parse_events(json, source), source)) durations.push_back(end - start);
    return durations;
}

std::vector<LayerTime> node_times(std::string_view json, std::string_view source, int skip_runs) {
    const nlohmann::json events = parse_events(json, source);
    const std::int64_t cutoff = warmup_end(events, source, skip_runs);

    std::vector<LayerTime> layers;
    std::map<std::string, std::size_t, std::less<>> index;  // node name -> position in layers
    for (std::size_t i = 0; i < events.size(); ++i) {
        const auto& e = events[i];
        if (!e.is_object())
            throw std::runtime_error(fmt::format("ONNX Runtime profile {}: event {} is not an object", source, i));
        if (text_field(e, "cat") != "Node") continue;
        const std::string name = text_field(e, "name");
        if (!name.ends_with(kKernelSuffix)) continue;
        if (nanoseconds(e, "ts", i, source) < cutoff) continue;
        const std::int64_t dur_ns = nanoseconds(e, "dur", i, source);
        const std::string node = name.substr(0, name.size() - kKernelSuffix.size());
        auto [it, added] = index.try_emplace(node, layers.size());
        if (added) {
            const auto args = e.find("args");
            const bool has_args = args != e.end() && args->is_object();
            layers.push_back({node, has_args ? text_field(*args, "op_name") : "",
                              has_args ? text_field(*args, "provider") : "", 0, 0});
        }
        LayerTime& layer = layers[it->second];
        ++layer.calls;
        layer.total_ns += std::max<std::int64_t>(dur_ns, 0);
    }
    if (layers.empty())
        throw std::runtime_error(fmt::format(
            "ONNX Runtime profile {} has no node events (\"cat\": \"Node\", \"name\": \"<node>_kernel_time\"){}",
            source, skip_runs > 0 ? " after the warm-up run" : ""));
    return layers;
}

std::string read_profile(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(fmt::format("cannot read ONNX Runtime profile {}", file.string()));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<LayerTime> read_node_times(const std::filesystem::path& file, int skip_runs) {
    return node_times(read_profile(file), file.string(), skip_runs);
}

std::vector<BackendMetric> compare_with_events(std::span<const std::int64_t> runtime_ns,
                                               std::span<const std::int64_t> event_ns) {
    if (runtime_ns.empty() || runtime_ns.size() != event_ns.size()) return {};
    const double runtime_total = std::accumulate(runtime_ns.begin(), runtime_ns.end(), 0.0);
    const double events_total = std::accumulate(event_ns.begin(), event_ns.end(), 0.0);
    if (events_total <= 0) return {};
    namespace pm = profile_metrics;
    return {{std::string(pm::kRuns), static_cast<double>(runtime_ns.size()), "count"},
            {std::string(pm::kRuntimeMedianNs), summarize(runtime_ns).p50, "ns"},
            {std::string(pm::kEventsMedianNs), summarize(event_ns).p50, "ns"},
            {std::string(pm::kRuntimeOverEvents), runtime_total / events_total, "ratio"}};
}

}  // namespace inferbench::ort_profile
