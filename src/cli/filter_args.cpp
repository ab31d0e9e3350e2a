#include "cli/filter_args.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/plan/plan.hpp"
#include "core/plan/settings.hpp"
#include "core/units.hpp"

namespace inferbench::cli {

std::vector<std::string> list_items(const std::vector<std::string>& values, std::string_view flag) {
    std::vector<std::string> out;
    for (const auto& value : values) {
        for (const auto& item : split_list(value)) {
            if (item.empty()) throw UserError(fmt::format("{} {}: empty item in the list", flag, value));
            out.push_back(item);
        }
    }
    return out;
}

report::ReportFilter cleaned_filter(const report::ReportFilter& raw, const std::vector<std::string>& batches) {
    report::ReportFilter filter = raw;
    filter.devices = list_items(raw.devices, "--device");
    filter.models = list_items(raw.models, "--model");
    filter.backends = list_items(raw.backends, "--backend");
    filter.precisions = list_items(raw.precisions, "--precision");
    filter.batch_sizes.clear();
    for (const auto& text : list_items(batches, "--batch")) {
        const auto batch = parse_batch_size(text);
        if (!batch)
            throw UserError(fmt::format("--batch {}: '{}' is not a batch size (a whole number from 1 to {})",
                                        join(batches, ","), text, kMaxBatchSize));
        filter.batch_sizes.push_back(*batch);
    }
    return filter;
}

void add_selection_options(CLI::App& cmd, report::ReportFilter& filter, std::vector<std::string>& batches) {
    cmd.add_option("--run", filter.runs, "run ids (3 or 3,5), latest or all")->capture_default_str();
    cmd.add_option("--device", filter.devices, "only these devices, comma-separated")->delimiter(',');
    cmd.add_option("--model", filter.models, "only these models")->delimiter(',');
    cmd.add_option("--backend,--frameworks,--framework", filter.backends, "only these backends")->delimiter(',');
    cmd.add_option("--precision,--precisions", filter.precisions, "only these precisions")->delimiter(',');
    cmd.add_option("--batch,--batches", batches, "only these batch sizes, e.g. 1,8")->delimiter(',');
}

void add_db_option(CLI::App& cmd, std::string& db) {
    cmd.add_option("--db", db, fmt::format("results database (default {})", resolved_db_path(RunSettings{})));
}

void add_image_format_option(CLI::App& cmd, ImageFormatArgs& args) {
    cmd.add_option("--image-format", args.names, "figure formats: png, svg")->delimiter(',')->default_str("png,svg");
    // Hidden: help shows only the new spelling.
    cmd.add_option("--format", args.old_spelling, "")->delimiter(',')->group("");
}

std::vector<report::ImageFormat> image_formats(const ImageFormatArgs& args, std::string_view command) {
    if (!args.old_spelling.empty()) {
        if (!args.names.empty())
            throw UserError(fmt::format("{} --format and --image-format: both name the figure formats; give only "
                                        "--image-format",
                                        command));
        fmt::print(stderr, "inferbench: warning: {} --format is now --image-format; the old spelling still works "
                           "for figures but will go away\n",
                   command);
    }
    const bool old = !args.old_spelling.empty();
    const std::string_view flag = old ? "--format" : "--image-format";
    const auto& given = old ? args.old_spelling : args.names;
    if (given.empty()) return {report::ImageFormat::png, report::ImageFormat::svg};
    std::vector<report::ImageFormat> formats;
    for (const auto& name : list_items(given, flag)) {
        if (name == "png")
            formats.push_back(report::ImageFormat::png);
        else if (name == "svg")
            formats.push_back(report::ImageFormat::svg);
        else
            throw UserError(fmt::format("{} {}: unknown image format; valid choices: png, svg", flag, name));
    }
    return formats;
}

}  // namespace inferbench::cli
