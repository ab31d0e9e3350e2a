// `inferbench completion bash`: the bash completion script (cli/completion).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/completion.hpp"
#include "core/error.hpp"
#include "core/plan/settings.hpp"

namespace inferbench::cli {

void add_completion_command(CLI::App& app, CommandContext& context) {
    CLI::App* command = app.add_subcommand(
        "completion", "print a shell completion script: eval \"$(inferbench completion bash)\", or install it as "
                      "share/bash-completion/completions/inferbench (cmake --install does)");
    auto shell = std::make_shared<std::string>();
    command->add_option("shell", *shell, "the shell: bash")->required()->check(CLI::IsMember({"bash"}));
    command->callback([&app, &context] {
        context.action = [&app] {
            std::vector<std::string_view> keys;
            for (const auto& field : setting_fields()) keys.push_back(field.key);
            std::cout << bash_completion(app, keys);
            return kExitOk;
        };
    });
}

}  // namespace inferbench::cli
