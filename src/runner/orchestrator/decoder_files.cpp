#include "runner/orchestrator/decoder_files.hpp"

#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"
#include "models/gguf_writer.hpp"
#include "models/hf_folder.hpp"
#include "models/onnx_decoder.hpp"

namespace inferbench::runner {

std::filesystem::path write_zoo_decoder(const models::DecoderModel& model, std::string_view form, Precision precision,
                                        const std::filesystem::path& cache_dir, std::uint64_t seed) {
    std::error_code ec;
    std::filesystem::create_directories(cache_dir, ec);
    const std::string precision_name(to_string(precision));
    if (form == "gguf") {
        const auto path = models::decoder_cache_path(cache_dir, model.name, seed, models::gguf_file_form(precision));
        if (!std::filesystem::is_regular_file(path, ec)) models::write_llama_gguf(model.shape, seed, precision, path);
        return path;
    }
    if (form == "onnx") {
        const auto path = models::decoder_cache_path(cache_dir, model.name, seed, precision_name + ".onnx");
        if (!std::filesystem::is_regular_file(path, ec)) models::write_llama_onnx(model.shape, seed, precision, path);
        return path;
    }
    if (form == "hf") {
        const auto dir = models::decoder_cache_path(cache_dir, model.name, seed, precision_name + "-hf");
        if (!std::filesystem::is_directory(dir, ec)) models::write_llama_hf_folder(model.shape, seed, precision, dir);
        return dir;
    }
    throw UserError(fmt::format("{}: zoo decoders are written as gguf, onnx or a Hugging Face folder, not {}",
                                model.name, form));
}

}  // namespace inferbench::runner
