#include "backends/trtexec/trtexec_log.hpp"

#include <cctype>
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "backends/tensorrt/tensorrt_platform.hpp"
#include "backends/trtexec/trtexec_log_settings.hpp"
#include "backends/trtexec/trtexec_version.hpp"
#include "core/metrics/trtexec_metrics.hpp"
#include "core/units.hpp"

namespace inferbench::trtexec {

namespace names = trtexec_metrics;

namespace {

constexpr auto npos = std::string_view::npos;

struct LogLine {
    char severity = 0;  // I, W, E, V, F; 0 when the line has no severity tag
    std::string_view message;
};

bool is_timestamp(std::string_view inner) {
    return inner.size() >= 8 && inner.find('/') != npos && inner.find(':') != npos;
}

// Drops "[05/29/2022-21:55:54] [W] [TRT] " in any combination, and the CR of a CRLF line end.
// Only the one space after each tag goes: the indentation of continuation lines is kept.
LogLine strip_prefixes(std::string_view line) {
    if (line.ends_with('\r')) line.remove_suffix(1);
    LogLine out;
    while (line.starts_with('[')) {
        const auto close = line.find(']');
        if (close == npos) break;
        const std::string_view inner = line.substr(1, close - 1);
        if (inner.size() == 1 && std::string_view("VIWEF").find(inner[0]) != npos) {
            out.severity = inner[0];
        } else if (inner != "TRT" && !is_timestamp(inner)) {
            break;
        }
        line.remove_prefix(close + 1);
        if (line.starts_with(' ')) line.remove_prefix(1);
    }
    out.message = line;
    return out;
}

// "Enqueue Time" -> "enqueue_time": lower case, runs of anything else one underscore.
std::string snake_case(std::string_view text) {
    std::string out;
    for (const char c : text) {
        if (std::isalnum(static_cast<unsigned char>(c))) {
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (!out.empty() && out.back() != '_') {
            out += '_';
        }
    }
    while (out.ends_with('_')) out.pop_back();
    return out;
}

std::string quantity_key(std::string_view printed_name) {
    if (printed_name == "Latency" || printed_name == "Host Latency") return std::string(names::kHostLatency);
    if (printed_name == "End-to-End Host Latency") return std::string(names::kE2eHostLatency);
    if (printed_name == "Enqueue Time") return std::string(names::kEnqueue);
    if (printed_name == "H2D Latency") return std::string(names::kH2d);
    if (printed_name == "GPU Compute Time" || printed_name == "GPU Compute") return std::string(names::kGpuCompute);
    if (printed_name == "D2H Latency") return std::string(names::kD2h);
    return snake_case(printed_name);
}

// "33.4643 ms" (or us, s) in milliseconds.
std::optional<double> milliseconds(std::string_view text) {
    text = trim(text);
    const auto space = text.find(' ');
    if (space == npos) return std::nullopt;
    const auto value = parse_double(text.substr(0, space));
    const std::string_view unit = trim(text.substr(space + 1));
    if (!value) return std::nullopt;
    if (unit == "ms") return *value;
    if (unit == "us") return *value / 1e3;
    if (unit == "s") return *value * 1e3;
    if (unit == "ns") return *value / 1e6;
    return std::nullopt;
}

// "percentile(99%)" -> 99.
std::optional<double> percentile_of(std::string_view key) {
    if (!key.starts_with("percentile(") || !key.ends_with("%)")) return std::nullopt;
    return parse_double(key.substr(11, key.size() - 13));
}

// "percentile: 1.67 ms at 99%" (TensorRT 7): the time and the percent.
std::optional<std::pair<double, double>> percentile_at(std::string_view text) {
    const auto at = text.find(" at ");
    if (at == npos || !text.ends_with('%')) return std::nullopt;
    const auto value = milliseconds(text.substr(0, at));
    const auto percent = parse_double(text.substr(at + 4, text.size() - at - 5));
    if (!value || !percent) return std::nullopt;
    return std::pair{*value, *percent};
}

constexpr unsigned kMin = 1, kMax = 2, kMean = 4, kMedian = 8, kPercentile = 16;

// One "key = value ms" (TensorRT 7.2 and newer) or "key: value ms" item into `stat`: the bit of the
// field set, nothing when the item cannot be read.
std::optional<unsigned> read_statistic_item(std::string_view item, LogStatistic& stat) {
    auto separator = item.find(" = ");
    std::size_t skip = 3;
    if (separator == npos) {
        separator = item.find(": ");
        skip = 2;
    }
    if (separator == npos) return std::nullopt;
    const std::string_view key = trim(item.substr(0, separator));
    const std::string_view text = item.substr(separator + skip);
    if (key == "percentile") {
        const auto value = percentile_at(trim(text));
        if (!value) return std::nullopt;
        stat.percentiles_ms.emplace_back(value->second, value->first);
        return kPercentile;
    }
    const auto value = milliseconds(text);
    if (!value) return std::nullopt;
    if (key == "min") stat.min_ms = *value;
    else if (key == "max") stat.max_ms = *value;
    else if (key == "mean") stat.mean_ms = *value;
    else if (key == "median") stat.median_ms = *value;
    else if (const auto percent = percentile_of(key)) stat.percentiles_ms.emplace_back(*percent, *value);
    else return std::nullopt;
    return key == "min" ? kMin : key == "max" ? kMax : key == "mean" ? kMean : key == "median" ? kMedian : kPercentile;
}

// No inference takes a day: a longer "time" is a broken log, not a measurement.
constexpr double kMaxPlausibleMs = 86'400'000.0;

// Why one statistic's figures cannot be measured times, or nothing when they can.
std::optional<std::string> implausible(const LogStatistic& stat) {
    std::vector<std::pair<std::string, double>> values = {
        {"min", stat.min_ms}, {"max", stat.max_ms}, {"mean", stat.mean_ms}, {"median", stat.median_ms}};
    for (const auto& [percent, value] : stat.percentiles_ms) values.emplace_back(fmt::format("p{:g}", percent), value);
    for (const auto& [name, value] : values) {
        if (!std::isfinite(value) || value < 0 || value > kMaxPlausibleMs)
            return fmt::format("{} = {:g} ms is not a possible time", name, value);
    }
    if (stat.min_ms > stat.max_ms) return fmt::format("min = {:g} ms is above max = {:g} ms", stat.min_ms, stat.max_ms);
    for (const auto& [name, value] : values) {
        if (value < stat.min_ms || value > stat.max_ms)
            return fmt::format("{} = {:g} ms lies outside min .. max ({:g} .. {:g} ms)", name, value, stat.min_ms,
                               stat.max_ms);
    }
    return std::nullopt;
}

// "GPU Compute Time: min = 33.4643 ms, max = ..., percentile(99%) = 34.8665 ms". Returns why the line
// is rejected: figures no measurement has, or a line cut short (an item half printed, or one of the
// five kinds missing).
std::optional<std::string> parse_statistic(std::string_view message, TrtexecLog& log) {
    const auto colon = message.find(": ");
    if (colon == npos || !message.substr(colon + 2).starts_with("min")) return std::nullopt;
    LogStatistic stat;
    unsigned seen = 0;
    std::string_view rest = message.substr(colon + 2);
    while (!rest.empty()) {
        const auto comma = rest.find(", ");
        const std::string_view item = rest.substr(0, comma);
        const auto field = read_statistic_item(item, stat);
        if (!field && seen == 0) return std::nullopt;  // not a statistic line
        if (!field) return fmt::format("'{}' cannot be read (cut short?)", item);
        seen |= *field;
        rest = comma == npos ? std::string_view{} : rest.substr(comma + 2);
    }
    if (seen != (kMin | kMax | kMean | kMedian | kPercentile) || trim(message).ends_with(','))
        return std::string("cut short (every trtexec prints min, max, mean, median and a percentile)");
    if (auto why = implausible(stat)) return why;
    log.statistics[quantity_key(message.substr(0, colon))] = std::move(stat);
    return std::nullopt;
}

// Label of one "label: value ms" piece of a trace line: "GPU latency", "end to end", "host walltime is".
std::string trace_label(std::string_view text) {
    const auto first = text.find_first_not_of(" -(),:");
    if (first == npos) return "average";  // "Average over 10 runs is 0.95 ms" (TensorRT 5 and 6)
    text = text.substr(first);
    text = text.substr(0, text.find_last_not_of(" -(),:") + 1);
    if (text == "is") return "average";
    if (text.ends_with(" is")) text.remove_suffix(3);
    return snake_case(text);
}

// Why one trace value cannot be an averaged time, or nothing when it can.
std::optional<std::string> implausible_time(std::string_view label, std::string_view text) {
    const auto value = parse_double(text);
    if (!value) return fmt::format("{} '{}' is not a number", label, text);
    if (*value < 0 || *value > kMaxPlausibleMs) return fmt::format("{} = {:g} ms is not a possible time", label, *value);
    return std::nullopt;
}

// Every trace layout ends its line with a time or a closing parenthesis, and closes what it opens.
bool whole_trace_line(std::string_view message) {
    message = trim(message);
    if (message.ends_with('.')) message.remove_suffix(1);
    return (message.ends_with(" ms") || message.ends_with(')')) &&
           std::ranges::count(message, '(') == std::ranges::count(message, ')');
}

// "Average on 10 runs - GPU latency: 33.8371 ms - Host latency: 35.1268 ms (end to end 35.1314 ms,
// enqueue 34.6321 ms)" and its variants: every "<label> <number> ms" piece after "runs". Returns why the
// line is rejected: a run count or a time no measurement has, a piece cut short, or other labels than
// the first trace line's (a line cut after one of its pieces).
std::optional<std::string> parse_trace_average(std::string_view message, TrtexecLog& log) {
    const auto runs = message.find(" runs");
    if (runs == npos) return std::string("cut short (no 'N runs')");
    const std::string_view head = message.substr(0, runs);
    const auto count = parse_int(head.substr(head.rfind(' ') + 1));
    if (!count || *count <= 0) return fmt::format("'{}' is not a possible run count", head.substr(head.rfind(' ') + 1));
    const std::string_view rest = message.substr(runs + 5);
    std::vector<std::pair<std::string, double>> pieces;
    std::size_t pos = 0;
    for (auto ms = rest.find(" ms", pos); ms != npos; ms = rest.find(" ms", pos)) {
        const auto number_begin = rest.rfind(' ', ms - 1) + 1;
        if (number_begin <= pos) return std::string("cut short (a time without its label)");
        const std::string label = trace_label(rest.substr(pos, number_begin - pos)) + "_ms";
        const std::string_view number = rest.substr(number_begin, ms - number_begin);
        if (auto why = implausible_time(label, number)) return why;
        pieces.emplace_back(label, *parse_double(number));
        pos = ms + 3;
    }
    if (pieces.empty() || !whole_trace_line(message)) return std::string("cut short");
    if (!log.trace_averages_ms.empty()) {
        const bool same = pieces.size() == log.trace_averages_ms.size() &&
                          std::ranges::all_of(pieces, [&](const auto& p) { return log.trace_averages_ms.contains(p.first); });
        if (!same) return std::string("cut short (not the times of the first trace line)");
        if (*count != log.runs_per_average)
            return fmt::format("averages {} runs where the first trace line averages {}", *count, log.runs_per_average);
    }
    log.runs_per_average = *count;
    for (auto& [label, value] : pieces) log.trace_averages_ms[label].push_back(value);
    return std::nullopt;
}

// A line as quoted in a message: at most `width` characters.
std::string shortened(std::string_view line, std::size_t width) {
    return line.size() <= width ? std::string(line) : std::string(line.substr(0, width - 3)) + "...";
}

std::optional<double> value_before(std::string_view text, std::string_view unit) {
    text = trim(text);
    if (!text.ends_with(unit)) return std::nullopt;
    return parse_double(text.substr(0, text.size() - unit.size()));
}

// A total or a rate read into `slot`; why not, when it is negative.
std::optional<std::string> read_amount(std::string_view text, std::string_view unit, std::optional<double>& slot) {
    const auto value = value_before(text, unit);
    if (value && *value < 0) return fmt::format("{:g} {} is not possible (negative)", *value, unit);
    slot = value;
    return std::nullopt;
}

// "&&&& RUNNING|PASSED|FAILED TensorRT.trtexec [TensorRT v100900] [b34] # trtexec --onnx=...".
void parse_status_line(std::string_view message, TrtexecLog& log) {
    if (message.starts_with("&&&& PASSED")) log.passed = true;
    if (message.starts_with("&&&& FAILED")) log.passed = false;
    if (log.tensorrt_version.empty()) log.tensorrt_version = find_tensorrt_version(message);
    const auto hash = message.find(" # ");
    if (hash != npos && !log.command) log.command = parse_trtexec_command(trim(message.substr(hash + 3)));
}

// Returns why the line is rejected, if it is.
std::optional<std::string> parse_info_line(std::string_view m, TrtexecLog& log) {
    if (m.starts_with("TensorRT version: ")) {
        if (log.tensorrt_version.empty()) log.tensorrt_version = std::string(trim(m.substr(18)));
    } else if (m.starts_with("Selected Device: ")) {
        log.gpu_name = std::string(trim(m.substr(17)));
    } else if (m.starts_with("Throughput: ")) {
        return read_amount(m.substr(12), "qps", log.throughput_qps);
    } else if (m.starts_with("Total Host Walltime: ")) {
        return read_amount(m.substr(21), "s", log.total_host_walltime_s);
    } else if (m.starts_with("Total GPU Compute Time: ")) {
        return read_amount(m.substr(24), "s", log.total_gpu_compute_time_s);
    } else if (m.starts_with("Timing trace has ")) {
        const std::string_view rest = m.substr(17);
        log.queries = parse_int(rest.substr(0, rest.find(' ')));
        if (!log.queries || *log.queries < 0) {
            log.queries.reset();
            return std::string("not a possible query count");
        }
    } else if (m.starts_with("Average on ") || m.starts_with("Average over ")) {
        return parse_trace_average(m, log);
    } else {
        return parse_statistic(m, log);
    }
    return std::nullopt;
}

// trtexec's own verdicts, kept as facts beside the warning text.
void read_warning_facts(TrtexecLog& log) {
    constexpr std::string_view kCv = "coefficient of variance = ";
    for (const auto& warning : log.warnings) {
        if (warning.find("bound by Enqueue Time") != npos) log.enqueue_bound = true;
        const auto at = warning.find(kCv);
        if (warning.starts_with("GPU compute time is unstable") && at != npos) {
            const std::string_view rest = std::string_view(warning).substr(at + kCv.size());
            log.gpu_compute_cv_pct = parse_double(rest.substr(0, rest.find('%')));
        }
    }
}

std::optional<std::int64_t> batch_from_shapes(std::string_view shapes) {
    const std::string_view first = shapes.substr(0, shapes.find(','));
    const auto colon = first.rfind(':');
    if (colon == npos) return std::nullopt;
    const std::string_view dims = first.substr(colon + 1);
    return parse_int(dims.substr(0, dims.find('x')));
}

}  // namespace

std::optional<double> LogStatistic::percentile(double percent) const {
    for (const auto& [p, value] : percentiles_ms) {
        if (p == percent) return value;
    }
    return std::nullopt;
}

std::vector<std::string> TrtexecLog::missing_from_summary() const {
    std::vector<std::string> missing;
    if (!throughput_qps) missing.emplace_back("no 'Throughput: N qps' line");
    if (!statistics.contains(names::kHostLatency)) missing.emplace_back("no 'Latency: min = ...' line");
    if (!statistics.contains(names::kGpuCompute)) missing.emplace_back("no 'GPU Compute Time: min = ...' line");
    return missing;
}

bool TrtexecLog::strongly_typed() const {
    if (build_precision == "Strongly Typed" || (command && command->strongly_typed)) return true;
    const auto version = parse_tensorrt_version(tensorrt_version);
    return version && precision_route(*version) == PrecisionRoute::typed_onnx;
}

std::optional<std::int64_t> TrtexecLog::measured_queries() const {
    if (queries) return queries;
    if (!throughput_qps || !total_host_walltime_s) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(*throughput_qps * *total_host_walltime_s));
}

TrtexecLog parse_trtexec_log(std::string_view text) {
    TrtexecLog log;
    bool in_warning = false;  // the previous line was a warning that an indented line continues
    for (std::size_t number = 1; !text.empty(); ++number) {
        const auto newline = text.find('\n');
        const LogLine line = strip_prefixes(text.substr(0, newline));
        text = newline == npos ? std::string_view{} : text.substr(newline + 1);
        const std::string_view m = line.message;
        const bool continuation = in_warning && line.severity == 'W' && m.starts_with(' ') && !trim(m).empty();
        in_warning = false;
        if (continuation) {
            log.warnings.back() += " " + std::string(trim(m));
            in_warning = true;
        } else if (line.severity == 'W' && m.starts_with("* ")) {
            log.warnings.emplace_back(trim(m.substr(2)));
            in_warning = true;
        } else if (detail::read_setting_line(m, line.severity, log)) {
            // a setting, a refused option or the tuning loop's progress: read into `log`
        } else if (m.starts_with("&&&& ")) {
            parse_status_line(m, log);
        } else if (const auto why = parse_info_line(m, log)) {
            log.rejected_lines.push_back(fmt::format("line {}: {}: '{}'", number, *why, shortened(trim(m), 120)));
        }
    }
    read_warning_facts(log);
    return log;
}

std::string find_tensorrt_version(std::string_view text) {
    constexpr std::string_view kTag = "[TensorRT v";
    constexpr std::string_view kLine = "TensorRT version: ";
    const auto tag = text.find(kTag);
    const auto line = text.find(kLine);
    if (tag != npos && (line == npos || tag < line)) {
        const std::string_view rest = text.substr(tag + kTag.size());
        const auto encoded = parse_int(rest.substr(0, rest.find(']')));
        if (encoded && *encoded > 0 && *encoded <= std::numeric_limits<std::int32_t>::max())
            return to_string(decode_tensorrt_version(static_cast<std::int32_t>(*encoded)));
    }
    if (line != npos) {
        const std::string_view rest = text.substr(line + kLine.size());
        return std::string(trim(rest.substr(0, rest.find_first_of(" \r\n"))));
    }
    return {};
}

LogCommand parse_trtexec_command(std::string_view text) {
    LogCommand command;
    command.text = std::string(text);
    std::optional<std::int64_t> batch, shapes_batch, opt_shapes_batch;
    while (!text.empty()) {
        const auto end = text.find(' ');
        const std::string_view token = text.substr(0, end);
        text = end == npos ? std::string_view{} : trim(text.substr(end));
        const auto equals = token.find('=');
        const std::string_view key = token.substr(0, equals);
        const std::string_view value = equals == npos ? std::string_view{} : token.substr(equals + 1);
        if (const auto removed = removed_flag(key)) command.removed_flags.emplace_back(*removed);
        if (key == "--onnx") command.onnx = value;
        else if (key == "--loadEngine") command.load_engine = value;
        else if (key == "--saveEngine") command.save_engine = value;
        else if (key == "--fp16") command.fp16 = true;
        else if (key == "--bf16") command.bf16 = true;
        else if (key == "--int8") command.int8 = true;
        else if (key == "--fp8") command.fp8 = true;
        else if (key == "--int4") command.int4 = true;
        else if (key == "--best") command.best = true;
        else if (key == "--stronglyTyped") command.strongly_typed = true;
        else if (key == "--noTF32") command.no_tf32 = true;
        else if (key == "--batch") batch = parse_int(value);
        else if (key == "--shapes") shapes_batch = batch_from_shapes(value);
        else if (key == "--optShapes") opt_shapes_batch = batch_from_shapes(value);
        else if (key == "--device") command.device = static_cast<int>(parse_int(value).value_or(0));
    }
    command.batch = batch ? batch : shapes_batch ? shapes_batch : opt_shapes_batch;
    return command;
}

std::string precision_label(const LogCommand& command) {
    if (command.best) return "best";
    if (command.int4) return "int4";
    if (command.fp8) return "fp8";
    if (command.int8) return "int8";
    if (command.fp16) return "fp16";
    if (command.bf16) return "bf16";
    return "fp32";
}

std::string precision_label(const TrtexecLog& log) {
    if (log.strongly_typed()) return std::string(kStronglyTypedLabel);
    return log.command ? precision_label(*log.command) : "fp32";
}

std::vector<LogMetric> log_metrics(const TrtexecLog& log) {
    std::vector<LogMetric> metrics;
    const auto add = [&](std::string_view name, std::optional<double> value, std::string unit) {
        if (value) metrics.push_back({std::string(name), *value, std::move(unit)});
    };
    add(names::kThroughputQps, log.throughput_qps, "qps");
    const auto queries = log.measured_queries();
    add(names::kQueries, queries ? std::optional<double>(static_cast<double>(*queries)) : std::nullopt, "count");
    add(names::kTotalHostWalltimeS, log.total_host_walltime_s, "s");
    add(names::kTotalGpuComputeTimeS, log.total_gpu_compute_time_s, "s");
    add(names::kGpuComputeCvPct, log.gpu_compute_cv_pct, "%");
    if (log.runs_per_average > 0) add(names::kTraceAverageRuns, static_cast<double>(log.runs_per_average), "count");
    for (const auto& [quantity, stat] : log.statistics) {
        const bool transfer = quantity == names::kH2d || quantity == names::kD2h;
        if (transfer && log.data_transfers == false) continue;  // zeros printed for transfers never made
        add(names::statistic_name(quantity, names::kMin), stat.min_ms, "ms");
        add(names::statistic_name(quantity, names::kMax), stat.max_ms, "ms");
        add(names::statistic_name(quantity, names::kMean), stat.mean_ms, "ms");
        add(names::statistic_name(quantity, names::kMedian), stat.median_ms, "ms");
        for (const auto& [percent, value] : stat.percentiles_ms)
            add(names::statistic_name(quantity, names::percentile(percent)), value, "ms");
    }
    return metrics;
}

}  // namespace inferbench::trtexec
