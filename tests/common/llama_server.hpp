// llama.cpp's llama-server (scripts/build-llama-server.sh) for tests: a random-weight llama-tiny GGUF written by
// models/gguf_writer, the server started on 127.0.0.1 on a free port with one thread, `parallel` slots and no web
// UI, ready once GET /health answers 200, and stopped (SIGTERM to its group, SIGKILL after a grace) when the
// object goes. Built on serving/server_process, as a serving cell starts its server. Tests that need it call
// INFERBENCH_REQUIRE_LLAMA_SERVER() first: where the server is not built they are skipped, saying how to build it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "models/decoder_models.hpp"
#include "models/gguf_writer.hpp"
#include "serving/server_process.hpp"

#ifndef INFERBENCH_LLAMA_CPP_DIR
#error "INFERBENCH_LLAMA_CPP_DIR (the folder scripts/fetch-llama-cpp.sh provisions) must be defined"
#endif

namespace inferbench::testing {

struct LlamaServerOptions {
    std::int64_t parallel = 2;    // --parallel: requests decoded together
    std::int64_t context = 2048;  // -c: the KV cache, shared by the slots (each holds context / parallel)
    std::string alias = "llama-tiny";
    std::uint64_t model_seed = 42;
    std::int64_t ready_timeout_ns = 60'000'000'000;
};

// The folder of the provisioned llama.cpp (lib/ with its backends, bin/llama-server).
inline std::filesystem::path llama_cpp_dir() { return INFERBENCH_LLAMA_CPP_DIR; }
inline std::filesystem::path llama_server_binary() { return llama_cpp_dir() / "bin" / "llama-server"; }

// Why the server cannot run here, or nothing when it can.
inline std::optional<std::string> llama_server_missing() {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(llama_server_binary(), ec))
        return "llama-server is not built (" + llama_server_binary().string() +
               "): run scripts/fetch-llama-cpp.sh, then scripts/build-llama-server.sh";
    return std::nullopt;
}

#define INFERBENCH_REQUIRE_LLAMA_SERVER()                                                                 \
    do {                                                                                                  \
        if (const auto missing = ::inferbench::testing::llama_server_missing()) GTEST_SKIP() << *missing; \
    } while (false)

// llama-tiny's vocabulary (models/gguf_writer): ids 0-2 are <unk> <s> </s>, 3-258 the byte pieces <0x00>..<0xFF>,
// then text pieces. Prompts given as token ids use text pieces only, so each id is one token and one piece.
inline constexpr std::int64_t kFirstTextToken = 259;

// The command that starts llama-server, as a plan's server_command writes it ({model}, {host} and {port} filled
// by serving::fill_command): its working directory is lib/, where it loads the compute backends from.
inline std::string llama_server_command(std::int64_t parallel, std::int64_t context, const std::string& alias) {
    const auto quoted = [](const std::filesystem::path& path) { return "'" + path.string() + "'"; };
    return "env -C " + quoted(llama_cpp_dir() / "lib") + " " + quoted(llama_server_binary()) +
           " -m {model} --host {host} --port {port} -t 1 --parallel " + std::to_string(parallel) + " -c " +
           std::to_string(context) + " --alias " + alias + " --no-ui";
}

class LlamaServer {
public:
    explicit LlamaServer(const LlamaServerOptions& options = {}) : options_(options) {
        model_ = scratch_.path() / "llama-tiny.gguf";
        models::write_llama_gguf(tiny_shape(), options.model_seed, Precision::fp32, model_);
        // A port found free can be taken before the server binds it: then a few tries, each on a new port.
        constexpr int kAttempts = 3;
        for (int attempt = 1;; ++attempt) {
            try {
                start(serving::free_local_port());
                return;
            } catch (const UserError&) {
                const bool port_taken = process_->log_tail().find("couldn't bind") != std::string::npos;
                process_.reset();
                if (!port_taken || attempt == kAttempts) throw;
            }
        }
    }

    static const DecoderShape& tiny_shape() { return models::find_decoder_model("llama-tiny")->shape; }
    const std::string& base_url() const { return base_url_; }
    const std::string& command() const { return process_->command(); }
    std::string log_tail() const { return process_->log_tail(); }
    const LlamaServerOptions& options() const { return options_; }

private:
    void start(int port) {
        base_url_ = "http://127.0.0.1:" + std::to_string(port);
        const std::string command =
            serving::fill_command(llama_server_command(options_.parallel, options_.context, options_.alias),
                                  {{"model", model_.string()}, {"host", "127.0.0.1"}, {"port", std::to_string(port)}});
        process_ = std::make_unique<serving::ServerProcess>(command, scratch_.path() / "llama-server.log");
        process_->wait_ready(base_url_ + "/health", options_.ready_timeout_ns);
    }

    LlamaServerOptions options_;
    ScratchDir scratch_;
    std::filesystem::path model_;
    std::string base_url_;
    std::unique_ptr<serving::ServerProcess> process_;
};

}  // namespace inferbench::testing
