#include "backends/torch_aoti/aoti_options.hpp"

#include <sstream>

#include "backends/options.hpp"

namespace inferbench {
namespace {

// "KEY=VALUE KEY=VALUE": each item has a key before its '='.
std::vector<std::string> read_export_options(const OptionReader& read) {
    const std::string text = read.text("export_options");
    std::vector<std::string> items;
    std::istringstream words(text);
    for (std::string item; words >> item;) {
        if (item.find('=') == std::string::npos || item.front() == '=')
            read.reject("export_options", text, "KEY=VALUE settings separated by spaces, e.g. 'freezing=1'");
        items.push_back(item);
    }
    return items;
}

}  // namespace

std::vector<BackendOption> aoti_option_list() {
    return {
        {"python", "",
         "the Python whose PyTorch compiles the package (the PyTorch this module's LibTorch comes from); empty: "
         "python3 on PATH, then /usr/bin/python3",
         OptionType::path},
        {"dynamic_batch", "false",
         "one package with a dynamic batch dimension for every batch size, instead of one package per batch size",
         OptionType::flag},
        {"seq_len", "0", "text models (bert, hf:): the sequence length; 0: the exporter's default", OptionType::count},
        {"export_options", "", "more KEY=VALUE settings for runners/torch_export.py, separated by spaces"},
        cuda_graph_option(),
        device_resident_option(),
        threads_option(),
    };
}

AotiOptions parse_aoti_options(const OptionMap& options) {
    const OptionReader read(std::string(kTorchAotiBackend), options, aoti_option_list());
    AotiOptions parsed;
    parsed.python = read.text("python");
    parsed.dynamic_batch = read.flag("dynamic_batch");
    parsed.seq_len = read.count("seq_len", kMaxAotiSeqLen);
    parsed.export_options = read_export_options(read);
    parsed.cuda_graph = read.flag("cuda_graph");
    parsed.device_resident = read.flag("device_resident");
    parsed.threads = read.count("threads");
    return parsed;
}

std::optional<std::string> aoti_device_problem(const AotiOptions& options, const BenchmarkSpec& spec) {
    return cuda_only_options_problem(spec, options.cuda_graph, options.device_resident);
}

}  // namespace inferbench
