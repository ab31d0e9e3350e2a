// `inferbench models list|export|inspect` (`models check`: cmd_models_check.cpp): the zoo, and a static cost report of any ONNX file
// (shapes, parameters, MACs, FLOPs, bytes, intensity, tensor-core pitfalls).
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "analysis/summary.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/plan/settings.hpp"
#include "core/units.hpp"
#include "models/cost_model.hpp"
#include "models/zoo.hpp"
#include "report/cost_figure.hpp"
#include "report/table.hpp"

namespace inferbench::cli {
namespace {

namespace fs = std::filesystem;
using models::ModelCost;

// `run`'s default seed: the same weights as a run's export.
std::uint64_t default_seed() { return static_cast<std::uint64_t>(RunSettings{}.seed); }

constexpr const char* kConventions =
    "1 MAC = 2 FLOPs; MACs: Conv, ConvTranspose, Gemm, MatMul (bias not counted); other ops count FLOPs: "
    "1 per output element for elementwise ops and activations, Softmax 3, BatchNormalization 2 (0 with "
    "--fold-bn), LayerNormalization/InstanceNormalization 7, pools kernel size, reductions 1 per input "
    "element, CumSum 1, NonMaxSuppression 13 per box pair and class (at most: a bound), RoiAlign 8 per sample "
    "(adaptive sampling at most that of a roi the size of the feature map: a bound), If the branch taken (the "
    "costlier one where the condition is known only at run time: a bound), data movement 0; bytes = inputs + "
    "weights read, outputs written; view ops 0 bytes; parameters = trainable ones (weights, biases, BN scale "
    "and shift, as torchvision and `list models` count; not shape constants or Clip bounds), BN running mean "
    "and variance counted apart";

struct InspectArgs {
    std::string file;
    std::string batch;
    std::vector<std::string> shapes;
    bool fold_bn = false;
    bool csv = false;
    OutputOptions output;
};

struct ExportArgs {
    std::string name;
    std::string batch = "dynamic";
    std::string out;
    std::uint64_t seed = default_seed();
    std::int64_t image_size = 0;
    std::int64_t sequence_length = 0;
};

std::string dims_text(const models::ValueShape& shape) {
    if (!shape.known) return "?";
    return fmt::format("[{}]", fmt::join(shape.dims, ","));
}

std::string shapes_text(const models::NodeCost& node) {
    std::vector<std::string> parts;
    for (const auto& s : node.outputs) parts.push_back(dims_text(s));
    return fmt::format("{}", fmt::join(parts, " "));
}

report::Table nodes_table(const ModelCost& cost) {
    report::Table table{"nodes",
                        // On a narrow terminal the byte counts go first, then the intensity, the
                        // parameters, the MACs and the flags (the first line and the totals say what is
                        // unknown); the node, its op, shapes and FLOPs stay. --format csv has them all.
                        {{"name", "node", 2, report::Fit::wrap},
                         {"op", "op"},
                         {"output_shapes", "output shapes", 2, report::Fit::wrap},
                         {"parameters", "params", 2, report::Fit::keep, 3},
                         {"macs", "MACs", 2, report::Fit::keep, 2},
                         {"flops", "FLOPs"},
                         {"bytes_read", "bytes read", 2, report::Fit::keep, 5},
                         {"bytes_written", "bytes written", 2, report::Fit::keep, 5},
                         {"intensity_flops_per_byte", "FLOP/B", 2, report::Fit::keep, 4},
                         {"flags", "flags", 2, report::Fit::wrap, 1}},
                        {}};
    for (const auto& n : cost.nodes) {
        std::vector<std::string> marks = n.flags;
        if (n.data_dependent) marks.insert(marks.begin(), "data-dependent");
        const std::string flags = n.unknown ? std::string("unknown") : fmt::format("{}", fmt::join(marks, ","));
        table.rows.push_back({n.name, n.op_type, shapes_text(n), n.parameters, n.macs, n.flops, n.bytes_read,
                              n.bytes_written, n.intensity(), flags});
    }
    return table;
}

report::Table totals_table(const ModelCost& cost, std::int64_t file_bytes) {
    const auto& t = cost.totals;
    report::Table table{"totals", {{"quantity", "quantity"}, {"value", "value"}}, {}};
    const auto add = [&](const char* what, report::Cell value) { table.rows.push_back({std::string(what), value}); };
    add("nodes", t.nodes);
    add("unknown nodes", t.unknown_nodes);
    add("data-dependent nodes", t.data_dependent_nodes);
    add("parameters (trainable)", t.parameters);
    add("BN running statistics", t.batch_norm_statistics);
    add("MACs", t.macs);
    add("GMACs", static_cast<double>(t.macs) / 1e9);
    add("FLOPs", t.flops);
    add("GFLOPs", static_cast<double>(t.flops) / 1e9);
    add("bytes read", t.bytes_read);
    add("bytes written", t.bytes_written);
    add("intensity FLOP/B", t.intensity());
    add("file bytes", file_bytes);
    return table;
}

report::Table histogram_table(const ModelCost& cost) {
    report::Table table{"histogram", {{"op", "op"}, {"nodes", "nodes"}}, {}};
    for (const auto& [op, count] : cost.histogram) table.rows.push_back({op, count});
    return table;
}

// The totals as the reports see them, for one wording of what they are (a total or a bound).
analysis::ModelFigures figures_of(const ModelCost& cost) {
    analysis::ModelFigures figures;
    figures.flops_per_inference = static_cast<double>(cost.totals.flops);
    figures.cost_unknown_nodes = static_cast<double>(cost.totals.unknown_nodes);
    figures.cost_data_dependent_nodes = static_cast<double>(cost.totals.data_dependent_nodes);
    return figures;
}

// The first line of the report where the totals are not the model's whole cost.
std::optional<std::string> incomplete_line(const ModelCost& cost) {
    const auto reason = figures_of(cost).incomplete_cost_reason();
    if (!reason) return std::nullopt;
    return fmt::format("{}; {} nodes in all", *reason, cost.totals.nodes);
}

nlohmann::ordered_json node_json(const models::NodeCost& n) {
    nlohmann::ordered_json shapes = nlohmann::ordered_json::array();
    for (const auto& s : n.outputs) shapes.push_back(s.known ? nlohmann::ordered_json(s.dims) : nullptr);
    return {{"name", n.name},
            {"op", n.op_type},
            {"output_shapes", shapes},
            {"parameters", n.parameters},
            {"macs", n.macs},
            {"flops", n.flops},
            {"bytes_read", n.bytes_read},
            {"bytes_written", n.bytes_written},
            {"intensity_flops_per_byte", n.intensity()},
            {"flags", n.flags},
            {"unknown", n.unknown},
            {"data_dependent", n.data_dependent}};
}

nlohmann::ordered_json totals_json(const models::CostTotals& t) {
    return {{"nodes", t.nodes},
            {"unknown_nodes", t.unknown_nodes},
            {"data_dependent_nodes", t.data_dependent_nodes},
            {"parameters", t.parameters},
            {"batch_norm_statistics", t.batch_norm_statistics},
            {"macs", t.macs},
            {"flops", t.flops},
            {"bytes_read", t.bytes_read},
            {"bytes_written", t.bytes_written},
            {"intensity_flops_per_byte", t.intensity()}};
}

nlohmann::ordered_json json_document(const InspectArgs& args, const ModelCost& cost, std::int64_t file_bytes,
                                     const std::vector<std::string>& warnings) {
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
    for (const auto& n : cost.nodes) nodes.push_back(node_json(n));
    nlohmann::ordered_json doc;
    doc["schema_version"] = report::kJsonSchemaVersion;
    doc["file"] = args.file;
    doc["file_bytes"] = file_bytes;
    const auto figure = report::gflops_figure(figures_of(cost));
    doc["cost_bound"] = figure.bound.empty() ? "total" : figure.bound;  // lower, upper, none
    doc["cost_status"] = incomplete_line(cost).value_or("total: every node costed at concrete sizes");
    doc["conventions"] = kConventions;
    doc["batch_norm_folded"] = args.fold_bn;
    doc["totals"] = totals_json(cost.totals);
    doc["histogram"] = cost.histogram;
    doc["flags"] = cost.flags;
    doc["warnings"] = warnings;
    doc["nodes"] = nodes;
    return doc;
}

models::ShapeInferenceOptions shape_options(const InspectArgs& args) {
    models::ShapeInferenceOptions options;
    if (!args.batch.empty()) {
        const auto [name, dims] = models::parse_shape_override("batch=" + args.batch);
        if (dims.size() != 1) throw UserError(fmt::format("--batch {}: expected one whole number >= 1", args.batch));
        options.batch = dims[0];
    }
    for (const auto& text : args.shapes) options.input_shapes.insert(models::parse_shape_override(text));
    return options;
}

int inspect(const InspectArgs& args) {
    const auto format = report::parse_format(args.csv ? "csv" : args.output.resolved());
    const auto [model, file_bytes] = models::read_zoo_or_file(args.file, default_seed());
    const auto shapes = models::infer_shapes(model, shape_options(args));
    const auto cost = models::estimate_cost(model, shapes, {args.fold_bn});
    if (format == report::Format::json) {
        std::cout << json_document(args, cost, file_bytes, shapes.warnings).dump(2) << '\n';
        return kExitOk;
    }
    // Said first: a reader who stops at the first line must not take the totals for the whole cost.
    // CSV stays one table, so its line goes to stderr.
    if (const auto line = incomplete_line(cost))
        (format == report::Format::csv ? std::cerr : std::cout) << "inferbench: " << *line << '\n';
    for (const auto& w : shapes.warnings) fmt::print(stderr, "inferbench: warning: {}\n", w);
    OutputOptions output = args.output;
    if (args.csv) output.format = "csv";
    print_table(nodes_table(cost), output);
    if (format == report::Format::csv) return kExitOk;  // one table per CSV document
    std::cout << '\n';
    print_table(totals_table(cost, file_bytes), output, false);
    std::cout << '\n';
    print_table(histogram_table(cost), output, false);
    if (args.output.quiet) return kExitOk;
    for (const auto& f : cost.flags) print_wrapped("flag: " + f);
    print_wrapped(std::string("conventions: ") + kConventions);
    return kExitOk;
}

// "dynamic" -> 0 (the symbolic batch dimension stays), "N" -> N.
std::int64_t export_batch(const std::string& text) {
    if (text == "dynamic") return 0;
    const auto value = parse_int(text);
    if (!value || *value < 1) {
        throw UserError(fmt::format("--batch {}: expected 'dynamic' or a whole number >= 1", text));
    }
    return *value;
}

int export_model(const ExportArgs& args) {
    const std::int64_t batch = export_batch(args.batch);
    if (args.image_size < 0 || args.sequence_length < 0)
        throw UserError("--image-size and --sequence-length take a whole number >= 1");
    const models::ZooOptions options{
        .image_size = args.image_size, .sequence_length = args.sequence_length, .batch = batch};
    const fs::path cached = models::export_onnx(args.name, resolved_model_cache(RunSettings{}), args.seed, options);
    fs::path written = cached;
    if (!args.out.empty()) {
        std::error_code ec;
        fs::copy_file(cached, args.out, fs::copy_options::overwrite_existing, ec);
        if (ec) throw EnvironmentError(fmt::format("cannot write {}: {}", args.out, ec.message()));
        written = args.out;
    }
    std::cout << written.string() << '\n';
    return kExitOk;
}

void add_inspect(CLI::App& models_cmd, CommandContext& context) {
    auto args = std::make_shared<InspectArgs>();
    CLI::App* cmd = models_cmd.add_subcommand("inspect",
                                              "shapes, parameters, MACs, FLOPs, bytes and pitfalls per node of "
                                              "an ONNX file");
    cmd->add_option("file", args->file, "ONNX model file, or a zoo model name (built in memory at its published size)")
        ->required();
    cmd->add_option("--batch", args->batch, "binds a symbolic first dimension of the inputs (default 1)");
    cmd->add_option("--shape", args->shapes, "an input's whole shape, NAME=D0,D1,... (repeatable)")
        ->allow_extra_args(false);
    cmd->add_flag("--fold-bn", args->fold_bn, "count BatchNormalization as folded into the convolution (0 FLOPs)");
    cmd->add_flag("--csv", args->csv, "same as --format csv (the per-node table)");
    args->output.add_to(*cmd);
    cmd->callback([&context, args] { context.action = [args] { return inspect(*args); }; });
}

void add_export(CLI::App& models_cmd, CommandContext& context) {
    auto args = std::make_shared<ExportArgs>();
    CLI::App* cmd = models_cmd.add_subcommand("export", "write a zoo model as ONNX and print its path");
    cmd->add_option("name", args->name, "zoo model name (see `inferbench models list`)")->required();
    cmd->add_option("--batch", args->batch,
                    "dynamic (default: a symbolic batch dimension) or N (N fixed on every input and output)");
    cmd->add_option("--out", args->out, "copy the model to this file (default: the model cache)");
    cmd->add_option("--seed", args->seed, fmt::format("weight seed (default {}, as `run`)", default_seed()));
    cmd->add_option("--image-size", args->image_size,
                    "a reduced image side (the volume's side for 3d-unet): the same layers and weights, for quick "
                    "checks; default: the published size");
    cmd->add_option("--sequence-length", args->sequence_length,
                    "BERT's tokens instead of the published 384 (the same layers and weights)");
    cmd->callback([&context, args] { context.action = [args] { return export_model(*args); }; });
}

}  // namespace

void add_models_command(CLI::App& app, CommandContext& context) {
    CLI::App* models_cmd = app.add_subcommand("models", "the model zoo, a static cost report of any ONNX file, and output checks between backends");
    models_cmd->require_subcommand(1);
    auto list_output = std::make_shared<OutputOptions>();
    CLI::App* list = models_cmd->add_subcommand("list", "list the zoo models (same as `list models`)");
    list_output->add_to(*list);
    list->callback([&context, list_output] {
        context.action = [list_output] {
            print_table(zoo_models_table(), *list_output);
            return kExitOk;
        };
    });
    add_export(*models_cmd, context);
    add_inspect(*models_cmd, context);
    add_models_check(*models_cmd, context);
}

}  // namespace inferbench::cli
