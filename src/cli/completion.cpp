#include "cli/completion.hpp"

#include <fmt/format.h>

#include <vector>

namespace inferbench::cli {
namespace {

// One command (a path of subcommand names: "models inspect") with what may follow it.
struct CommandWords {
    std::string path;
    std::vector<std::string> subcommands;
    std::vector<std::string> flags;         // every long and short name
    std::vector<std::string> value_flags;   // those that take a value
};

void collect(const CLI::App& command, const std::string& path, std::vector<CommandWords>& out) {
    CommandWords words{path, {}, {}, {}};
    for (const CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; }))
        words.subcommands.push_back(sub->get_name());
    for (const CLI::Option* option : command.get_options()) {
        std::vector<std::string> names;
        for (const auto& name : option->get_lnames()) names.push_back("--" + name);
        for (const auto& name : option->get_snames()) names.push_back("-" + name);
        for (const auto& name : names) {
            words.flags.push_back(name);
            if (option->get_type_size() != 0) words.value_flags.push_back(name);
        }
    }
    out.push_back(words);
    for (const CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; }))
        collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

std::string joined(const std::vector<std::string>& words, std::string_view separator) {
    std::string text;
    for (const auto& word : words) text += (text.empty() ? "" : std::string(separator)) + word;
    return text;
}

}  // namespace

std::string bash_completion(const CLI::App& app, std::span<const std::string_view> plan_keys) {
    std::vector<CommandWords> commands;
    collect(app, "", commands);

    std::vector<std::string> path_cases;  // "run|" and "models|inspect": a word that extends the path
    for (const auto& command : commands)
        for (const auto& sub : command.subcommands) path_cases.push_back(fmt::format("\"{}|{}\"", command.path, sub));
    std::vector<std::string> keys;
    for (const auto key : plan_keys) keys.push_back(std::string(key) + "=");

    std::string words_case, values_case;
    for (const auto& command : commands) {
        words_case += fmt::format("        \"{}\") words=\"{}\" ;;\n", command.path,
                                  joined(command.subcommands, " ") + (command.subcommands.empty() ? "" : " ") +
                                      joined(command.flags, " "));
        if (!command.value_flags.empty())
            values_case += fmt::format("        \"{}\") values=\"{}\" ;;\n", command.path, joined(command.value_flags, " "));
    }

    return fmt::format(R"(# bash completion for inferbench, written by `inferbench completion bash`.
_inferbench() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
    local path="" word i words="" values=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${{COMP_WORDS[i]}}
        case "$path|$word" in
            {}) path="${{path:+$path }}$word" ;;
        esac
    done
    case "$path" in
{}    esac
    # An option's value: plan keys after --set, file names (the default) after the others.
    if [[ $prev == --set ]]; then
        compopt -o nospace 2>/dev/null
        COMPREPLY=($(compgen -W "{}" -- "$cur"))
        return
    fi
    case "$path" in
{}    esac
    for word in $values; do
        [[ $prev == "$word" ]] && return
    done
    if [[ $cur == -* || -n $words && $words != -* ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    fi
}}
complete -o default -F _inferbench inferbench
)",
                       joined(path_cases, "|"), words_case, joined(keys, " "), values_case);
}

}  // namespace inferbench::cli
