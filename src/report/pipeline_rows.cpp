#include "report/pipeline_rows.hpp"

#include <map>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/summary_table.hpp"

namespace inferbench::report {
namespace {

constexpr std::string_view kUnknown = "unknown";
constexpr std::string_view kNotMeasured = "not measured";
constexpr std::string_view kOnGpu = "on the GPU";

Cell text(std::string_view value) { return std::string(value); }

// The figures' definitions as readers need them (analysis/pipeline_summary.hpp defines them in code), by key.
const std::map<std::string_view, std::string_view>& definitions() {
    static const std::map<std::string_view, std::string_view> text = {
        {"images_per_s", "Images out of each batch's last stage, summed, over the measured window (first batch's "
                         "start to last batch's end). DeepStream, DALI: frames/s, samples/s."},
        {"e2e_p50_ms", "A batch's end-to-end time: its first stage's start to its last stage's end."},
        {"e2e_mean_ms", "A batch's end-to-end time: its first stage's start to its last stage's end."},
        {"network_pct", "infer's spans summed over the measured batches / their e2e summed."},
        {"gpu_idle_pct", "1 - the union of the infer spans / the measured window, on a GPU cell: the time no batch "
                         "was in the network (an upper bound on the GPU's idle time)."},
        {"between_pct", "e2e outside every stage span of its batch (queues, hand-offs), in percent of e2e."},
        {"bound_stage", "The CPU stage with the lowest bound: threads x 1e9 / its CPU ns per image."},
        {"bound_images_per_s", "The images/s the bounding CPU stage could pass were its threads never idle."},
        {"mean_ms", "The stage's span per batch (first image in to last image out), mean over the batches."},
        {"share_pct", "The stage's spans summed / e2e summed over the same batches."},
        {"cores", "The stage's CPU time (its threads') summed / the measured window: cores kept busy on average."},
        {"cores_running", "The stage's CPU time / its spans summed: the cores it used while it ran."},
        {"cpu_per_image_ms", "The stage's CPU time per image."},
        {"stage_bound_images_per_s", "threads x 1e9 / the stage's CPU ns per image (infer: the backend's own "
                                     "threads, not measured here)."},
    };
    return text;
}

void add_hints(Table& table) {
    for (auto& column : table.columns)
        if (const auto it = definitions().find(column.key); it != definitions().end()) column.hint = it->second;
}

std::vector<Cell> cell_identity(const analysis::BenchmarkSummary& s) {
    const auto& b = s.benchmark;
    return {benchmark_ids_cell(s), b.model, b.backend, b.device, b.precision, b.batch_size,
            pipeline_setup(*s.pipeline)};
}

std::vector<Column> identity_columns() {
    return {identity_column("benchmark_ids", "id"), identity_column("model", "model", Fit::wrap),
            identity_column("backend", "backend"), identity_column("device", "device"),
            identity_column("precision", "precision"), identity_column("batch", "batch"),
            identity_column("pipeline", "pre/post mode")};
}

Cell percent_or(const std::optional<double>& value, std::string_view missing) {
    return value ? Cell{*value} : text(missing);
}

std::string pipeline_note(const analysis::BenchmarkSummary& s) {
    std::vector<std::string> notes = s.pipeline->notes;
    notes.insert(notes.end(), s.warnings.begin(), s.warnings.end());
    return join(notes, "; ");
}

std::vector<Cell> pipeline_row(const analysis::BenchmarkSummary& s) {
    const auto& p = *s.pipeline;
    std::vector<Cell> row = cell_identity(s);
    const analysis::StageFigures* bound = p.bounding_stage ? &p.stages[*p.bounding_stage] : nullptr;
    const std::string images = p.images_lower_bound ? fmt::format(">={:.1f}", p.images_per_s) : std::string();
    const std::vector<Cell> figures = {
        images.empty() ? Cell{p.images_per_s} : Cell{Annotated{p.images_per_s, images}},
        Duration{p.e2e.p50},
        percent_or(p.network_share_pct, kUnknown),
        p.facts.gpu_device ? percent_or(p.gpu_idle_pct, kUnknown) : Cell{Null{}},
        p.between_stages_pct,
        bound ? Cell{std::string(to_string(bound->stage))} : text(kUnknown),
        bound ? Cell{*bound->bound_images_per_s} : text(kUnknown),
        pipeline_note(s),
        p.batches,
        p.images,
        Duration{p.e2e.mean},
        p.facts.threads ? Cell{*p.facts.threads} : text(kUnknown)};
    row.insert(row.end(), figures.begin(), figures.end());
    return row;
}

Cell cpu_figure(const analysis::StageFigures& f, const std::optional<double>& value, bool duration = false) {
    if (value) return duration ? Cell{Duration{*value}} : Cell{*value};
    return f.place == StagePlace::gpu ? text(kOnGpu) : text(kNotMeasured);
}

std::vector<Cell> stage_row(const analysis::BenchmarkSummary& s, const analysis::StageFigures& f) {
    std::vector<Cell> row = cell_identity(s);
    Cell bound = cpu_figure(f, f.bound_images_per_s);
    if (!f.bound_images_per_s && f.cpu_ns_per_image) bound = text("unknown: thread count not stored");
    const std::vector<Cell> figures = {std::string(to_string(f.stage)),
                                       std::string(to_string(f.place)),
                                       Duration{f.mean_ns},
                                       f.share_pct,
                                       cpu_figure(f, f.cores),
                                       cpu_figure(f, f.cores_while_running),
                                       cpu_figure(f, f.cpu_ns_per_image, true),
                                       std::move(bound),
                                       f.batches,
                                       f.images};
    row.insert(row.end(), figures.begin(), figures.end());
    return row;
}

}  // namespace

bool is_pipeline(const analysis::BenchmarkSummary& summary) { return summary.pipeline.has_value(); }

std::string pipeline_setup(const analysis::PipelineSummary& p) {
    const auto place = [](std::optional<StagePlace> where) {
        return where ? std::string(to_string(*where)) : std::string("?");
    };
    return fmt::format("{}/{} {}", place(p.preprocess_place()), place(p.postprocess_place()),
                       p.facts.mode ? std::string(to_string(*p.facts.mode)) : std::string("?"));
}

Table pipeline_table(std::span<const analysis::BenchmarkSummary> summaries) {
    Table table;
    table.name = "pipeline";
    table.columns = identity_columns();
    for (auto c : std::vector<Column>{{"images_per_s", "images/s", 1},
                                      {"e2e_p50_ms", "e2e p50"},
                                      {"network_pct", "network %", 1},
                                      {"gpu_idle_pct", "GPU idle %", 1},
                                      shed_column("between_pct", "between %", 1, 2),
                                      {"bound_stage", "bound by"},
                                      {"bound_images_per_s", "bound img/s", 1},
                                      {"note", "note", 2, Fit::footnote},
                                      file_column("batches", "batches", 0),
                                      file_column("images", "images", 0),
                                      file_column("e2e_mean_ms", "e2e mean"),
                                      file_column("threads", "threads", 0)})
        table.columns.push_back(std::move(c));
    for (const auto& s : summaries)
        if (is_pipeline(s)) table.rows.push_back(pipeline_row(s));
    add_hints(table);
    return table;
}

Table pipeline_stage_table(std::span<const analysis::BenchmarkSummary> summaries) {
    Table table;
    table.name = "pipeline_stages";
    table.columns = identity_columns();
    for (auto c : std::vector<Column>{identity_column("stage", "stage"),
                                      {"place", "place"},
                                      {"mean_ms", "mean/batch"},
                                      {"share_pct", "share %", 1},
                                      {"cores", "cores", 2},
                                      shed_column("cores_running", "cores running", 2, 2),
                                      {"cpu_per_image_ms", "CPU/image"},
                                      {"stage_bound_images_per_s", "bound img/s", 1},
                                      file_column("batches", "batches", 0),
                                      file_column("images", "images", 0)})
        table.columns.push_back(std::move(c));
    for (const auto& s : summaries)
        if (is_pipeline(s))
            for (const auto& f : s.pipeline->stages) table.rows.push_back(stage_row(s, f));
    add_hints(table);
    return table;
}

}  // namespace inferbench::report
