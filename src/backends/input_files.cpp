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

// One reader's view of the inputs: what its errors call the path, the inputs' names, and its check of each array.
struct Reading {
    std::string setting;
    const std::vector<std::string>& names;
    const FitArray& fit;
};

std::string input_names(const Reading& r) { return fmt::format("{}", fmt::join(r.names, ", ")); }

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

std::vector<HostTensor> npz_sample(const fs::path& file, const Reading& r) {
    std::vector<HostTensor> arrays = read_npz_file(file);
    std::vector<HostTensor> sample;
    for (std::size_t i = 0; i < r.names.size(); ++i) {
        const std::string& name = r.names[i];
        const auto found = std::find_if(arrays.begin(), arrays.end(), [&](const HostTensor& a) { return a.info.name == name; });
        if (found == arrays.end()) {
            std::vector<std::string> held;
            for (const auto& a : arrays) held.push_back(a.info.name);
            throw UserError(fmt::format("{} {}: no array named {} (it holds {}; the model's inputs are {})", r.setting,
                                        file.string(), name, held.empty() ? "none" : fmt::format("{}", fmt::join(held, ", ")),
                                        input_names(r)));
        }
        sample.push_back(r.fit(std::move(*found), i, fmt::format("{}:{}.npy", file.string(), name)));
    }
    return sample;
}

std::vector<HostTensor> npy_sample(const fs::path& file, const Reading& r) {
    if (r.names.size() != 1)
        throw UserError(fmt::format("{} {}: one .npy array feeds a model of one input, and this one has {} ({}); "
                                    "give an .npz archive or a folder with one NAME.npy per input",
                                    r.setting, file.string(), r.names.size(), input_names(r)));
    return {r.fit(read_npy_file(file, r.names[0]), 0, file.string())};
}

// NAME.npy per input in `dir` (suffix ""), or NAME_k.npy (suffix "_k"); nothing where an input has none.
std::optional<std::vector<HostTensor>> named_sample(const fs::path& dir, const Reading& r, const std::string& suffix) {
    std::error_code ec;
    std::vector<HostTensor> sample;
    for (std::size_t i = 0; i < r.names.size(); ++i) {
        const fs::path file = dir / (r.names[i] + suffix + ".npy");
        if (!fs::is_regular_file(file, ec)) return std::nullopt;
        sample.push_back(r.fit(read_npy_file(file, r.names[i]), i, file.string()));
    }
    return sample;
}

// How many of NAME_0.npy, NAME_1.npy, ... `dir` holds, up to the first missing index.
std::size_t indexed_files(const fs::path& dir, const std::string& name) {
    std::error_code ec;
    std::size_t count = 0;
    while (fs::is_regular_file(dir / fmt::format("{}_{}.npy", name, count), ec)) ++count;
    return count;
}

// NAME_0.npy, NAME_1.npy, ... per input: as many for each input, else refused (a sample left out unsaid would
// change what the run or the calibration sees).
InputSamples indexed_samples(const fs::path& dir, const Reading& r) {
    const std::size_t count = indexed_files(dir, r.names.front());
    for (const auto& name : r.names)
        if (const std::size_t n = indexed_files(dir, name); n != count)
            throw UserError(fmt::format("{} {}: input {} has {} files ({}_0.npy, ...), input {} has {}; give each "
                                        "input the same number",
                                        r.setting, dir.string(), r.names.front(), count, r.names.front(), name, n));
    InputSamples samples;
    for (std::size_t k = 0; k < count; ++k) samples.push_back(*named_sample(dir, r, fmt::format("_{}", k)));
    return samples;
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

std::vector<HostTensor> entry_sample(const fs::path& entry, const Reading& r) {
    std::error_code ec;
    if (fs::is_directory(entry, ec)) {
        if (auto sample = named_sample(entry, r, "")) return std::move(*sample);
        throw UserError(fmt::format("{} {}: no NAME.npy for every input ({})", r.setting, entry.string(), input_names(r)));
    }
    if (entry.extension() == ".npz") return npz_sample(entry, r);
    return npy_sample(entry, r);
}

InputSamples folder_samples(const fs::path& dir, const Reading& r) {
    if (auto one = named_sample(dir, r, "")) return {std::move(*one)};
    InputSamples samples = indexed_samples(dir, r);
    if (!samples.empty()) return samples;
    for (const auto& [number, entry] : numbered_entries(dir)) samples.push_back(entry_sample(entry, r));
    if (samples.empty())
        throw UserError(fmt::format("{} {}: holds no NAME.npy per input ({}), no NAME_0.npy, ... and no numbered "
                                    "samples (0/, 1/, ... or 0.npz, 1.npz, ...)",
                                    r.setting, dir.string(), input_names(r)));
    return samples;
}

}  // namespace

InputSamples read_input_files(const fs::path& path, const std::string& setting, const std::vector<std::string>& names,
                              const FitArray& fit) {
    const Reading r{setting, names, fit};
    std::error_code ec;
    InputSamples samples;
    if (fs::is_directory(path, ec))
        samples = folder_samples(path, r);
    else if (!fs::exists(path, ec))
        throw UserError(fmt::format("{} {}: no such file or folder", setting, path.string()));
    else if (path.extension() == ".npz")
        samples = {npz_sample(path, r)};
    else if (path.extension() == ".npy")
        samples = {npy_sample(path, r)};
    else
        throw UserError(fmt::format("{} {}: not an .npz archive, an .npy file or a folder of them", setting, path.string()));
    std::size_t total = 0;
    for (const auto& sample : samples)
        for (const auto& tensor : sample)
            total = add_total_bytes_or_throw(fmt::format("{} {}", setting, path.string()), total, tensor.data.size());
    return samples;
}

InputSamples read_input_samples(const fs::path& path, const std::vector<TensorInfo>& inputs) {
    check_input_sizes(inputs);
    std::vector<std::string> names;
    for (const auto& in : inputs) names.push_back(in.name);
    const FitArray fit = [&](HostTensor array, std::size_t input, const std::string& source) {
        return checked(std::move(array), inputs[input], source);
    };
    return read_input_files(path, "inputs", names, fit);
}

}  // namespace inferbench
