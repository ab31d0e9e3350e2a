// The comparison's tables, verdicts and text; its sides are made and named in comparison_sides.cpp.
#include "report/comparison.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/serving_comparison.hpp"
#include "report/pipeline_comparison.hpp"

namespace inferbench::report {
namespace {

const analysis::LatencyDistribution* generation_figure(const analysis::BenchmarkSummary* s, GenerationFigure figure) {
    if (!s || !s->generation) return nullptr;
    if (figure == GenerationFigure::ttft) return &s->generation->ttft;
    return s->generation->tpot ? &*s->generation->tpot : nullptr;
}

std::optional<double> ratio(std::optional<double> value, std::optional<double> base) {
    if (!value || !base || *base <= 0 || !std::isfinite(*value) || !std::isfinite(*base)) return std::nullopt;
    return *value / *base;
}

std::optional<double> throughput(const analysis::BenchmarkSummary* s) {
    if (!s || s->throughput_per_s <= 0) return std::nullopt;
    return s->throughput_per_s;
}

std::optional<double> efficiency(const analysis::BenchmarkSummary* s) {
    return s ? s->telemetry.inferences_per_joule : std::nullopt;
}

Cell cell_of(std::optional<double> value) { return value ? Cell{*value} : Cell{Null{}}; }

// The verdict as text (with the change and its interval where `full`); built by assignment, as GCC 12
// misreads a conditional expression of variants.
Cell verdict_cell(const std::optional<PairVerdict>& verdict, bool full = true) {
    Cell cell = Null{};
    if (verdict) cell = full ? verdict->text() : std::string(to_string(verdict->verdict));
    return cell;
}

// The long table's verdict, change and the ends of its interval, in percent.
void add_verdict_cells(std::vector<Cell>& cells, const std::optional<PairVerdict>& verdict) {
    cells.push_back(verdict_cell(verdict, false));
    std::vector<Cell> numbers(3, Null{});
    if (verdict) {
        numbers[0] = verdict->change * 100;
        if (const auto& ci = verdict->change_ci) {
            numbers[1] = ci->low * 100;
            numbers[2] = ci->high * 100;
        }
    }
    cells.insert(cells.end(), numbers.begin(), numbers.end());
}

std::string row_name(const ComparisonKey& key) {
    const auto& [model, backend, variant, precision, batch] = key;
    return fmt::format("{} {}{} {} b{}", model, backend, variant.empty() ? "" : " " + variant, precision, batch);
}

constexpr const char* kNotMeasured = "not measured";

// An energy figure: its value, else "not measured" where `say_missing` (a table where other sides measured power),
// else nothing.
Cell energy_cell(std::optional<double> value, bool say_missing) {
    if (value) return *value;
    return say_missing ? Cell{std::string(kNotMeasured)} : Cell{Null{}};
}

// The seven figures of one summary on one side, relative to the baseline's: mean, inf/s, x, W, J/inf, inf/J, eff x.
std::vector<Cell> side_cells(const analysis::BenchmarkSummary* s, const analysis::BenchmarkSummary* base,
                             bool say_missing) {
    std::vector<Cell> cells(7, Null{});  // built one by one: GCC 12 misreads an initializer list of variants
    if (!s) return cells;
    cells[0] = Duration{s->e2e.mean};
    cells[1] = cell_of(throughput(s));
    cells[2] = cell_of(ratio(throughput(s), throughput(base)));
    cells[3] = energy_cell(s->telemetry.mean_power_w, say_missing);
    cells[4] = energy_cell(s->telemetry.joules_per_inference, say_missing);
    cells[5] = energy_cell(efficiency(s), say_missing);
    cells[6] = cell_of(ratio(efficiency(s), efficiency(base)));
    return cells;
}

// Whether any side measured power for any row: then a side without it says so.
bool any_power(const Comparison& comparison) {
    for (const auto& row : comparison.rows)
        for (std::size_t side = 0; side < comparison.sides.size(); ++side)
            if (const auto* s = comparison.at(row, side); s && s->telemetry.mean_power_w) return true;
    return false;
}

// Energy per inference in mJ where every value is below 1 J.
bool millijoules(const Comparison& comparison) {
    double highest = 0;
    for (const auto& row : comparison.rows)
        for (std::size_t side = 0; side < comparison.sides.size(); ++side)
            if (const auto* s = comparison.at(row, side))
                highest = std::max(highest, s->telemetry.joules_per_inference.value_or(0));
    return highest < 1;
}

// "[2] duration 2s ([1] 10s); [3] concurrency ..." for a row whose sides' cells ran under other settings.
Cell settings_cell(const Comparison& comparison, const ComparisonRow& row) {
    std::vector<std::string> parts;
    for (std::size_t side = 0; side < comparison.sides.size(); ++side)
        if (const auto differences = settings_differences(comparison, row, side); !differences.empty())
            parts.push_back(fmt::format("[{}] {}", side + 1, join(differences, ", ")));
    Cell cell = Null{};
    if (!parts.empty()) cell = join(parts, "; ");
    return cell;
}

}  // namespace

const analysis::BenchmarkSummary* Comparison::at(const ComparisonRow& row, std::size_t side) const {
    if (side >= row.cells.size() || !row.cells[side]) return nullptr;
    return &sources[sides[side].source].summaries[*row.cells[side]];
}

Table comparison_table(const Comparison& comparison) {
    Table table;
    table.name = "comparison";
    // On a narrow terminal the energy columns go first, then the means, the options, the precision and the
    // verdicts (which wrap before they go); model, backend, batch and each side's inf/s and x stay.
    table.columns = {{"model", "model"},
                     {"backend", "backend"},
                     {"variant", "options", 2, Fit::keep, 2},
                     {"precision", "precision", 2, Fit::keep, 1},
                     {"batch_size", "batch"}};
    const bool mj = millijoules(comparison);
    const bool say_missing = any_power(comparison);
    for (std::size_t i = 1; i <= comparison.sides.size(); ++i) {
        const auto column = [i](const char* key, const char* title, int decimals, int shed) {
            return Column{fmt::format("s{}_{}", i, key), fmt::format("[{}] {}", i, title), decimals, Fit::keep, shed};
        };
        Column energy = column("joules_per_inference", "J/inf", 3, 4);
        if (mj) {
            energy.title = fmt::format("[{}] mJ/inf", i);
            energy.shown_scale = 1000;
            energy.decimals = 1;
        }
        const std::vector<Column> columns = {column("mean_ms", "mean", 2, 3),
                                             column("throughput_per_s", "inf/s", 1, 0),
                                             column("speedup", "x", 2, 0),
                                             column("power_w", "W", 1, 4),
                                             energy,
                                             column("inferences_per_joule", "inf/J", 2, 4),
                                             column("efficiency_ratio", "eff x", 2, 4),
                                             Column{fmt::format("s{}_verdict", i), fmt::format("[{}] verdict", i), 2,
                                                    Fit::wrap, 1},
                                             Column{fmt::format("s{}_ttft_verdict", i), fmt::format("[{}] TTFT", i), 2,
                                                    Fit::wrap, 1},
                                             Column{fmt::format("s{}_tpot_verdict", i), fmt::format("[{}] TPOT", i), 2,
                                                    Fit::wrap, 1}};
        table.columns.insert(table.columns.end(), columns.begin(), columns.end());
    }
    table.columns.push_back({"settings_differ", "settings differ", 2, Fit::footnote});
    for (const auto& row : comparison.rows) {
        const auto& [model, backend, variant, precision, batch] = row.key;
        std::vector<Cell> cells = {model, backend, variant, precision, batch};
        const auto* base = comparison.at(row, comparison.baseline);
        for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
            const auto figures = side_cells(comparison.at(row, side), base, say_missing);
            cells.insert(cells.end(), figures.begin(), figures.end());
            cells.push_back(verdict_cell(row_verdict(comparison, row, side)));
            for (const auto figure : {GenerationFigure::ttft, GenerationFigure::tpot})
                cells.push_back(verdict_cell(generation_verdict(comparison, row, side, figure)));
        }
        cells.push_back(settings_cell(comparison, row));
        table.rows.push_back(std::move(cells));
    }
    return table;
}

Table comparison_long_table(const Comparison& comparison) {
    Table table;
    table.name = "comparison";
    table.columns = {{"side", "side"},
                     {"device_label", "device label"},
                     {"db", "db"},
                     {"run_id", "run"},
                     {"device", "device"},
                     {"host", "host"},
                     {"device_name", "device name"},
                     {"driver_version", "driver"},
                     {"backend_version", "backend version"},
                     {"model", "model"},
                     {"backend", "backend"},
                     {"variant", "options"},
                     {"precision", "precision"},
                     {"batch_size", "batch"},
                     {"mean_ms", "mean"},
                     {"throughput_per_s", "inf/s", 1},
                     {"speedup", "x", 3},
                     {"power_w", "W", 1},
                     {"joules_per_inference", "J/inf", 4},
                     {"inferences_per_joule", "inf/J", 3},
                     {"efficiency_ratio", "eff x", 3},
                     {"verdict", "verdict"},
                     {"change_pct", "change %", 1},
                     {"change_ci95_low_pct", "change 95% low", 1},
                     {"change_ci95_high_pct", "change 95% high", 1},
                     {"convergence", "stop"},
                     {"repeats", "repeats"},
                     {"ttft_mean_ms", "TTFT mean"},
                     {"ttft_verdict", "TTFT verdict"},
                     {"ttft_change_pct", "TTFT change %", 1},
                     {"ttft_change_ci95_low_pct", "TTFT change 95% low", 1},
                     {"ttft_change_ci95_high_pct", "TTFT change 95% high", 1},
                     {"tpot_mean_ms", "TPOT mean"},
                     {"tpot_verdict", "TPOT verdict"},
                     {"tpot_change_pct", "TPOT change %", 1},
                     {"tpot_change_ci95_low_pct", "TPOT change 95% low", 1},
                     {"tpot_change_ci95_high_pct", "TPOT change 95% high", 1},
                     {"settings_differ", "settings differ"}};
    for (const auto& row : comparison.rows) {
        const auto& [model, backend, variant, precision, batch] = row.key;
        const auto* base = comparison.at(row, comparison.baseline);
        for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
            const auto* s = comparison.at(row, side);
            if (!s) continue;
            const auto& facts = comparison.sides[side];
            const auto text = [](const std::string& value) { return value.empty() ? Cell{Null{}} : Cell{value}; };
            std::vector<Cell> cells = {static_cast<std::int64_t>(side + 1),
                                       facts.label,
                                       comparison.sources[facts.source].db,
                                       comparison.run_id(row, side),
                                       facts.device,
                                       text(facts.host),
                                       text(facts.name),
                                       text(facts.driver),
                                       text(s->benchmark.backend_version),
                                       model,
                                       backend,
                                       variant,
                                       precision,
                                       batch};
            const auto figures = side_cells(s, base, false);
            cells.insert(cells.end(), figures.begin(), figures.end());
            add_verdict_cells(cells, row_verdict(comparison, row, side));
            cells.push_back(std::string(convergence_label(s->benchmark.convergence)));
            cells.push_back(s->repeats);
            for (const auto figure : {GenerationFigure::ttft, GenerationFigure::tpot}) {
                const auto* own = generation_figure(s, figure);
                cells.push_back(own ? Cell{Duration{own->ns.mean}} : Cell{Null{}});
                add_verdict_cells(cells, generation_verdict(comparison, row, side, figure));
            }
            const auto differences = settings_differences(comparison, row, side);
            cells.push_back(differences.empty() ? Cell{Null{}} : Cell{join(differences, ", ")});
            table.rows.push_back(std::move(cells));
        }
    }
    return table;
}

std::optional<PairVerdict> row_verdict(const Comparison& comparison, const ComparisonRow& row, std::size_t side) {
    const auto* s = comparison.at(row, side);
    const auto* base = comparison.at(row, comparison.baseline);
    if (side == comparison.baseline || !s || !base) return std::nullopt;
    return judge(*s, *base, comparison.margin);
}

std::string_view to_string(GenerationFigure figure) { return figure == GenerationFigure::ttft ? "TTFT" : "TPOT"; }

std::optional<PairVerdict> generation_verdict(const Comparison& comparison, const ComparisonRow& row, std::size_t side,
                                              GenerationFigure figure) {
    const auto* s = generation_figure(comparison.at(row, side), figure);
    const auto* base = generation_figure(comparison.at(row, comparison.baseline), figure);
    if (side == comparison.baseline || !s || !base || base->ns.mean <= 0) return std::nullopt;
    return judge(s->ns.mean, s->mean_ci, base->ns.mean, base->mean_ci, comparison.margin);
}

std::vector<std::string> regressions(const Comparison& comparison, double threshold) {
    std::vector<std::string> lines;
    const auto add = [&](const ComparisonRow& row, std::size_t side, const std::optional<PairVerdict>& verdict,
                         std::string_view what) {
        if (verdict && verdict->verdict == Verdict::slower && verdict->change > threshold)
            lines.push_back(fmt::format("{} [{}] {}: {}{}", row_name(row.key), side + 1, comparison.sides[side].label,
                                        what.empty() ? "" : fmt::format("{} ", what), verdict->text()));
    };
    for (const auto& row : comparison.rows)
        for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
            add(row, side, row_verdict(comparison, row, side), "");
            for (const auto figure : {GenerationFigure::ttft, GenerationFigure::tpot})
                add(row, side, generation_verdict(comparison, row, side, figure), to_string(figure));
        }
    return lines;
}

std::string render_comparison(const Comparison& comparison, Format format, const RenderOptions& options) {
    if (format == Format::csv || format == Format::json)
        return render(comparison_long_table(comparison), format, options);
    // Markdown is a file: its lines stay whole; a terminal's wrap to the table's width.
    const auto line_of = [&](const std::string& text) {
        return format == Format::text && options.width > 0 ? wrap_paragraph(text, options.width) : text + "\n";
    };
    std::string out;
    for (const auto& line : comparison_legend(comparison)) out += line_of((format == Format::markdown ? "- " : "") + line);
    for (const auto& line : comparison_warnings(comparison))
        out += line_of((format == Format::markdown ? "- warning: " : "warning: ") + line);
    const std::string verdicts = fmt::format(
        "verdict: mean latency against the baseline's, change and its 95% interval; SAME within +-{:g}%, FASTER or "
        "SLOWER where the interval excludes 0, UNSURE otherwise",
        comparison.margin * 100);
    out += format == Format::markdown ? fmt::format("\nx: throughput relative to the baseline; eff x: inferences per "
                                                    "joule relative to the baseline; {}.\n\n",
                                                    verdicts)
                                      : line_of("x: throughput / baseline's, eff x: inferences per joule / baseline's") +
                                            line_of(verdicts) + "\n";
    if (any_power(comparison))
        out += line_of("W, J/inf, inf/J: from the power the side's telemetry measured during the measured iterations; "
                       "not measured: that side recorded no power for the cell") +
               "\n";
    const bool generative = std::any_of(comparison.rows.begin(), comparison.rows.end(), [&](const ComparisonRow& row) {
        for (std::size_t side = 0; side < comparison.sides.size(); ++side)
            if (generation_figure(comparison.at(row, side), GenerationFigure::ttft)) return true;
        return false;
    });
    if (generative)
        out += line_of("TTFT, TPOT: a generative cell's mean time to first token and mean time per output token, "
                       "judged as the mean latency is") +
               "\n";
    out += render(comparison_table(comparison), format, options);
    if (const Table serving = serving_comparison_table(comparison); !serving.rows.empty())
        out += "\n" + line_of("serving cells: TTFT and TPOT p50 per request; x: output tokens/s / the baseline's; goodput: "
                              "requests meeting every SLO, failed ones counted against it") +
               render(serving, format, options);
    if (const Table pipeline = pipeline_comparison_table(comparison); !pipeline.rows.empty())
        out += "\n" + line_of("pipeline cells beside the network-only cell of their setup on the same side: network inf/s "
                              "on random tensors, the pipeline's images/s from images, lost: the share of the "
                              "network's throughput the pipeline does not reach") +
               render(pipeline, format, options);
    return out;
}

}  // namespace inferbench::report
