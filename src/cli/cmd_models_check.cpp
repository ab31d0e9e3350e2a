// `inferbench models check`: does a backend compute what a reference backend computes on the same
// inputs? (An fp16 run on the GPU against ONNX Runtime's fp32 on the CPU, by default.)
#include <cctype>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "backends/npy_file.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/plan/settings.hpp"
#include "runner/orchestrator/output_check.hpp"

namespace inferbench::cli {
namespace {

struct CheckArgs {
    std::string model;
    std::string backend = "torch";
    std::string device = "cpu";
    std::string precision = "fp32";
    std::vector<std::string> options;
    std::string reference = "onnxruntime";
    std::string reference_device = "cpu";
    std::string reference_precision = "fp32";
    std::vector<std::string> reference_options;
    std::int64_t batch = 1;
    std::uint64_t seed = static_cast<std::uint64_t>(RunSettings{}.seed);
    double tolerance = -1;  // below 0: the default of the checked precision
    std::string save_dir;
    OutputOptions output;
};

OptionMap option_map(const std::vector<std::string>& items, const char* flag) {
    OptionMap map;
    for (const std::string& item : items) {
        const auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
            throw UserError(fmt::format("{} {}: expected KEY=VALUE (`inferbench list backends --options` lists the options)",
                                        flag, item));
        map.insert_or_assign(item.substr(0, eq), item.substr(eq + 1));
    }
    return map;
}

runner::OutputCheckSide side(const std::string& backend, const std::string& device, const std::string& precision,
                     const std::vector<std::string>& options, const char* prefix) {
    const auto d = parse_device(device);
    if (!d) throw UserError(fmt::format("--{}device {}: expected cpu or cuda:N", prefix, device));
    const auto p = parse_precision(precision);
    if (!p) throw UserError(fmt::format("--{}precision {}: expected fp32, fp16, bf16, int8 or fp8", prefix, precision));
    return {backend, *d, *p, option_map(options, prefix[0] == '\0' ? "--option" : "--reference-option")};
}

std::string scientific(double v) { return fmt::format("{:.2e}", v); }

report::Table outputs_table(const runner::OutputCheckResult& result, double tolerance) {
    report::Table table{"outputs",
                        {{"output", "output", 0, report::Fit::wrap},
                         {"shape", "shape"},
                         {"dtype", "type"},
                         {"max_abs_error", "max |diff|"},
                         {"reference_max", "max |ref|"},
                         {"relative_error", "relative"},
                         {"mismatched", "mismatched", 0},
                         {"tolerance", "tolerance"},
                         {"agree", "agree"},
                         {"problem", "problem", 0, report::Fit::footnote}},
                        {}};
    for (const OutputAgreement& o : result.outputs) {
        table.rows.push_back({o.name, fmt::format("[{}]", fmt::join(o.shape, ",")), std::string(to_string(o.dtype)),
                              report::Annotated{o.max_abs_error, scientific(o.max_abs_error)},
                              report::Annotated{o.reference_max, fmt::format("{:.3g}", o.reference_max)},
                              report::Annotated{o.relative_error(), scientific(o.relative_error())}, o.mismatched,
                              report::Annotated{tolerance, scientific(tolerance)}, o.within(tolerance),
                              o.problem.empty() ? report::Cell{} : report::Cell{o.problem}});
    }
    return table;
}

std::string headline(const CheckArgs& args, const runner::OutputCheckResult& result, double tolerance, bool agree) {
    return fmt::format("{} {} {} against {} {} {}, {} at batch {}: {} (largest relative error {}, tolerance {})",
                       result.checked_version, args.device, args.precision, result.reference_version,
                       args.reference_device, args.reference_precision, args.model, args.batch,
                       agree ? "outputs agree" : "outputs DIFFER", scientific(largest_relative_error(result.outputs)),
                       scientific(tolerance));
}

runner::OutputCheckRequest check_request(const CheckArgs& args) {
    runner::OutputCheckRequest request;
    request.model = args.model;
    request.batch_size = args.batch;
    request.seed = args.seed;
    request.model_cache_dir = resolved_model_cache(RunSettings{});
    request.checked = side(args.backend, args.device, args.precision, args.options, "");
    request.reference = side(args.reference, args.reference_device, args.reference_precision, args.reference_options,
                             "reference-");
    return request;
}

void print_json(const CheckArgs& args, const runner::OutputCheckResult& result, const report::Table& table, bool agree) {
    nlohmann::json doc = report::table_json(table);  // keys sorted, as this document has always had them
    doc["checked"] = result.checked_version;
    doc["reference"] = result.reference_version;
    doc["model"] = args.model;
    doc["batch_size"] = args.batch;
    doc["agree"] = agree;
    doc["nearly_zero_outputs"] = nearly_zero_outputs(result.outputs);
    std::cout << doc.dump(2) << '\n';
}

void print_text(const CheckArgs& args, const runner::OutputCheckResult& result, const report::Table& table, double tolerance,
                bool agree) {
    if (!args.output.quiet) print_wrapped(headline(args, result, tolerance, agree));
    print_table(table, args.output);
    if (const auto tiny = nearly_zero_outputs(result.outputs); !tiny.empty())
        print_wrapped(fmt::format("note: every reference value of {} is below {:g} in magnitude (or there is "
                                  "none), so their agreement says little about this model (random weights can "
                                  "shrink its outputs to nearly zero, or leave a detector no box)",
                                  fmt::join(tiny, ", "), kNearlyZeroReference));
    if (!args.output.quiet)
        print_wrapped("relative = max |checked - reference| / max(1, max |ref|) over the output's finite "
                      "elements (absolute where max |ref| < 1); mismatched: elements NaN or infinite on one side "
                      "only, or unequal integers");
}

// A tensor's name as a file name: characters other than letters, digits, '.', '_' and '-' become '_'.
std::string file_part(const std::string& name) {
    std::string out = name;
    for (char& c : out)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
    return out;
}

// DIR/input.NAME.npy, reference.NAME.npy and checked.NAME.npy: what was fed and what each side returned.
void save_tensors(const std::string& dir, const runner::OutputCheckResult& result) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw EnvironmentError(fmt::format("--save {}: cannot create the folder: {}", dir, ec.message()));
    const auto save = [&](std::string_view role, const std::vector<HostTensor>& tensors) {
        for (const HostTensor& t : tensors)
            write_npy_file(std::filesystem::path(dir) / fmt::format("{}.{}.npy", role, file_part(t.info.name)), t);
    };
    save("input", result.input_tensors);
    save("reference", result.reference_outputs);
    save("checked", result.checked_outputs);
}

int check(const CheckArgs& args) {
    if (args.batch < 1) throw UserError(fmt::format("--batch {}: expected a whole number >= 1", args.batch));
    const auto format = report::parse_format(args.output.resolved());
    const runner::OutputCheckRequest request = check_request(args);
    const double tolerance = args.tolerance >= 0 ? args.tolerance : default_output_tolerance(request.checked.precision);
    const runner::OutputCheckResult result = runner::check_outputs(request);
    const bool agree = all_agree(result.outputs, tolerance);
    if (!args.save_dir.empty()) save_tensors(args.save_dir, result);
    const report::Table table = outputs_table(result, tolerance);
    if (format == report::Format::json)
        print_json(args, result, table, agree);
    else
        print_text(args, result, table, tolerance, agree);
    return agree ? kExitOk : kExitFailure;
}

}  // namespace

void add_models_check(CLI::App& models_cmd, CommandContext& context) {
    auto args = std::make_shared<CheckArgs>();
    CLI::App* cmd = models_cmd.add_subcommand(
        "check", "run a model once on a backend and once on a reference backend (same seeded inputs) and compare "
                 "the outputs; exit 1 when they differ beyond the tolerance");
    cmd->add_option("model", args->model, "model file, or a zoo model name")->required();
    cmd->add_option("--backend", args->backend, "the backend checked (default torch)");
    cmd->add_option("--device", args->device, "its device: cpu or cuda:N (default cpu)");
    cmd->add_option("--precision", args->precision, "its precision (default fp32)");
    cmd->add_option("--option", args->options, "its backend option KEY=VALUE (repeatable)")->allow_extra_args(false);
    cmd->add_option("--reference", args->reference, "the reference backend (default onnxruntime)");
    cmd->add_option("--reference-device", args->reference_device, "its device (default cpu)");
    cmd->add_option("--reference-precision", args->reference_precision, "its precision (default fp32)");
    cmd->add_option("--reference-option", args->reference_options, "its backend option KEY=VALUE (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--batch", args->batch, "batch size (default 1)");
    cmd->add_option("--seed", args->seed,
                    fmt::format("input and zoo-weight seed (default {}, as `run`)", RunSettings{}.seed));
    cmd->add_option("--tolerance", args->tolerance,
                    "largest relative error accepted (default by the checked precision: fp32 2e-3, fp16 2e-2, "
                    "bf16 8e-2, int8/fp8 2e-1)");
    cmd->add_option("--save", args->save_dir,
                    "write the inputs and both sides' outputs to this folder as .npy files (input.NAME.npy, "
                    "reference.NAME.npy, checked.NAME.npy)");
    args->output.add_to(*cmd);
    cmd->callback([&context, args] { context.action = [args] { return check(*args); }; });
}

}  // namespace inferbench::cli
