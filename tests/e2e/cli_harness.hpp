// Runs the real inferbench executable in a scratch folder and reads back what it printed.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/scratch_dir.hpp"

namespace inferbench::testing {

struct CliResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A scratch folder in which the real CLI runs, with the test backends on its search path.
class CliScratch : public ScratchDir {
public:
    // The shell command that runs the CLI with `args` (appended to the executable, shell-quoted by the
    // caller where needed), without redirections; `launcher` (e.g. "setpriv ...") goes before it.
    std::string command(const std::string& args, const std::string& launcher = "") const {
        return "cd '" + path().string() + "' && INFERBENCH_BACKEND_PATH='" + INFERBENCH_TEST_BACKEND_DIR +
               "' XDG_CACHE_HOME='" + path().string() + "/cache' " + launcher + " '" + INFERBENCH_EXE + "' " + args;
    }

    CliResult run(const std::string& args, const std::string& launcher = "") const {
        const std::string command_text = command(args, launcher) + " >stdout.txt 2>stderr.txt";
        const int status = std::system(command_text.c_str());
        CliResult result;
        result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        result.out = read_file(path() / "stdout.txt");
        result.err = read_file(path() / "stderr.txt");
        return result;
    }
};

}  // namespace inferbench::testing
