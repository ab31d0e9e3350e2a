#include "backends/input_files.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/npy_file.hpp"
#include "backends/npz_file.hpp"
#include "backends/random_inputs.hpp"
#include "core/error.hpp"
#include "core/tensor_size.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;

std::string input_names(const std::vector<TensorInfo>& inputs) {
    std::vector<std::string> names;
    for (const auto& in : inputs) names.push_back(in.name);
    return fmt::format("{}", fmt::join(names, ", "));
}

// The array `source` holds for input `in`, as the model takes it at the cell's batch size.
HostTensor checked(HostTensor array, const TensorInfo& in, const std::string& source) {
    if (array.info.dtype != in.dtype)
        throw UserError(fmt::format("inputs {}: holds {} but input {} takes {}; save it as that type", source,
                                    to_string(array.info.dtype), in.name, to_string(in.dtype)));
    if (array.info.shape != in.shape)
        throw UserError(fmt::format("inputs {}: shape {} does not fit input {}, which takes {} at this cell's batch "
                                    "size (the first dimension)",
                                    source, shape_text(array.info.shape), in.name, shape_text(in.shape)));
    array.info.name = in.name;
    return array;
}

std::vector<HostTensor> npz_sample(const fs::path& file, const std::vector<TensorInfo>& inputs) {
    std::vector<HostTensor> arrays = read_npz_file(file);
    std::vector<HostTensor> sample;
    for (const auto& in : inputs) {
        const auto found = std::find_if(arrays.begin(), arrays.end(), [&](const HostTensor& a) { return a.info.name == in.name; });
        if (found == arrays.end()) {
            std::vector<std::string> held;
            for (const auto& a : arrays) held.push_back(a.info.name);
            throw UserError(fmt::format("inputs {}: no array named {} (it holds {}; the model's inputs are {})",
                                        file.string(), in.name, held.empty() ? "none" : fmt::format("{}", fmt::join(held, ", ")),
                                        input_names(inputs)));
        }
        sample.push_back(checked(std::move(*found), in, fmt::format("{}:{}.npy", file.string(), in.name)));
    }
    return sample;
}

std::vector<HostTensor> npy_sample(const fs::path& file, const std::vector<TensorInfo>& inputs) {
    if (inputs.size() != 1)
        throw UserError(fmt::format("inputs {}: one .npy array feeds a model of one input, and this one has {} ({}); "
                                    "give an .npz archive or a folder with one NAME.npy per input",
                                    file.string(), inputs.size(), input_names(inputs)));
    return {checked(read_npy_file(file, inputs[0].name), inputs[0], file.string())};
}

// NAME.npy per input in `dir` (suffix ""), or NAME_k.npy (suffix "_k"); nothing where an input has none.
std::optional<std::vector<HostTensor>> named_sample(const fs::path& dir, const std::vector<TensorInfo>& inputs,
                                                    const std::string& suffix) {
    std::error_code ec;
    std::vector<HostTensor> sample;
    for (const auto& in : inputs) {
        const fs::path file = dir / (in.name + suffix + ".npy");
        if (!fs::is_regular_file(file, ec)) return std::nullopt;
        sample.push_back(checked(read_npy_file(file, in.name), in, file.string()));
    }
    return sample;
}

// The numbered entries of a folder (0, 1.npz, 2.npy, ...), by number.
std::map<std::int64_t, fs::path> numbered_entries(const fs::path& dir) {
    std::map<std::int64_t, fs::path> entries;
    for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string stem = entry.path().stem().string();
        std::int64_t number = 0;
        const auto [end, ec] = std::from_chars(stem.data(), stem.data() + stem.size(), number);
        if (ec == std::errc() && end == stem.data() + stem.size() && number >= 0) entries.emplace(number, entry.path());
    }
    return entries;
}

std::vector<HostTensor> entry_sample(const fs::path& entry, const std::vector<TensorInfo>& inputs) {
    std::error_code ec;
    if (fs::is_directory(entry, ec)) {
        if (auto sample = named_sample(entry, inputs, "")) return std::move(*sample);
        throw UserError(fmt::format("inputs {}: no NAME.npy for every input ({})", entry.string(), input_names(inputs)));
    }
    if (entry.extension() == ".npz") return npz_sample(entry, inputs);
    return npy_sample(entry, inputs);
}

InputSamples folder_samples(const fs::path& dir, const std::vector<TensorInfo>& inputs) {
    if (auto one = named_sample(dir, inputs, "")) return {std::move(*one)};
    InputSamples samples;
    for (std::size_t k = 0;; ++k) {
        auto sample = named_sample(dir, inputs, fmt::format("_{}", k));
        if (!sample) break;
        samples.push_back(std::move(*sample));
    }
    if (!samples.empty()) return samples;
    for (const auto& [number, entry] : numbered_entries(dir)) samples.push_back(entry_sample(entry, inputs));
    if (samples.empty())
        throw UserError(fmt::format("inputs {}: holds no NAME.npy per input ({}), no NAME_0.npy, ... and no numbered "
                                    "samples (0/, 1/, ... or 0.npz, 1.npz, ...)",
                                    dir.string(), input_names(inputs)));
    return samples;
}

}  // namespace

InputSamples read_input_samples(const fs::path& path, const std::vector<TensorInfo>& inputs) {
    check_input_sizes(inputs);
    std::error_code ec;
    InputSamples samples;
    if (fs::is_directory(path, ec))
        samples = folder_samples(path, inputs);
    else if (!fs::exists(path, ec))
        throw UserError(fmt::format("inputs {}: no such file or folder", path.string()));
    else if (path.extension() == ".npz")
        samples = {npz_sample(path, inputs)};
    else if (path.extension() == ".npy")
        samples = {npy_sample(path, inputs)};
    else
        throw UserError(fmt::format("inputs {}: not an .npz archive, an .npy file or a folder of them", path.string()));
    std::size_t total = 0;
    for (const auto& sample : samples)
        for (const auto& tensor : sample)
            total = add_total_bytes_or_throw(fmt::format("inputs {}", path.string()), total, tensor.data.size());
    return samples;
}

}  // namespace inferbench
