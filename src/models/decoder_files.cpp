#include "models/decoder_files.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench::models {

std::filesystem::path write_zoo_decoder(const DecoderModel& model, std::string_view form, Precision precision,
                                        const std::filesystem::path& cache_dir, std::uint64_t /*seed*/) {
    throw UserError(fmt::format("{}: no writer of the form {} at {} in this build ({})", model.name, form,
                                to_string(precision), cache_dir.string()));
}

}  // namespace inferbench::models
