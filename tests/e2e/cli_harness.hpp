// Runs the real inferbench executable in a scratch folder and reads back what it printed.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

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

class ScratchDir {
public:
    ScratchDir() {
        path_ = std::filesystem::temp_directory_path() /
                ("inferbench-e2e-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device{}()));
        std::filesystem::create_directories(path_);
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::filesystem::path& path() const { return path_; }
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    void write(const std::string& name, const std::string& text) const { std::ofstream(path_ / name) << text; }

    // `args` are appended to the executable, shell-quoted by the caller where needed.
    CliResult run(const std::string& args) const {
        const std::string command = "cd '" + path_.string() + "' && INFERBENCH_BACKEND_PATH='" +
                                    INFERBENCH_TEST_BACKEND_DIR + "' XDG_CACHE_HOME='" + path_.string() +
                                    "/cache' '" + INFERBENCH_EXE + "' " + args + " >stdout.txt 2>stderr.txt";
        const int status = std::system(command.c_str());
        CliResult result;
        result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        result.out = read_file(path_ / "stdout.txt");
        result.err = read_file(path_ / "stderr.txt");
        return result;
    }

private:
    std::filesystem::path path_;
};

}  // namespace inferbench::testing
