#include "backends/trtexec/trtexec_options.hpp"

#include <string_view>

#include "backends/options.hpp"
#include "core/units.hpp"

namespace inferbench::trtexec {
namespace {

// trtexec arguments are words: "--useCudaGraph  --noDataTransfers" -> two arguments.
std::vector<std::string> split_words(std::string_view text) {
    std::vector<std::string> words;
    std::string_view rest = trim(text);
    while (!rest.empty()) {
        const auto space = rest.find(' ');
        words.emplace_back(rest.substr(0, space));
        rest = space == std::string_view::npos ? std::string_view{} : trim(rest.substr(space));
    }
    return words;
}

}  // namespace

std::vector<BackendOption> trtexec_option_list() {
    return {
        {"trtexec", "", "path to trtexec; empty: trtexec on PATH, then /usr/src/tensorrt/bin/trtexec",
         OptionType::path},
        {"extra_args", "",
         "more trtexec arguments, separated by spaces, given to the engine build and to the run "
         "(e.g. --useCudaGraph, or --calib=CACHE for int8 on TensorRT 10; TensorRT 11 removed --calib and the "
         "precision flags)"},
    };
}

TrtexecOptions parse_trtexec_options(const OptionMap& options) {
    const OptionReader read("trtexec", options, trtexec_option_list());
    TrtexecOptions parsed;
    parsed.trtexec = std::string(trim(read.text("trtexec")));
    parsed.extra_args = split_words(read.text("extra_args"));
    return parsed;
}

}  // namespace inferbench::trtexec
