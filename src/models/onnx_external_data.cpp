#include "models/onnx_external_data.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench::models::onnx {
namespace {

namespace fs = std::filesystem;

// Every tensor of the model that can hold data: initializers and tensor-valued attributes.
template <typename Model, typename Visit>
void for_each_tensor(Model& model, Visit visit) {
    for (auto& tensor : model.graph.initializers) visit(tensor);
    for (auto& node : model.graph.nodes)
        for (auto& [name, value] : node.attributes)
            if (auto* tensor = std::get_if<OnnxTensor>(&value)) visit(*tensor);
}

// Whether `path` lies inside `folder` once both are canonical (links resolved).
bool inside(const fs::path& folder, const fs::path& path) {
    const auto [end, _] = std::mismatch(folder.begin(), folder.end(), path.begin(), path.end());
    return end == folder.end();
}

class ExternalFiles {
public:
    ExternalFiles(fs::path folder, std::string_view source) : folder_(std::move(folder)), source_(source) {}
    ExternalFiles(const ExternalFiles&) = delete;
    ExternalFiles& operator=(const ExternalFiles&) = delete;
    ~ExternalFiles() {
        for (const auto& [path, file] : files_) close(file.fd);
    }

    void load(OnnxTensor& tensor) {
        const auto& where = *tensor.external;
        const auto fail = [&](const std::string& what) {
            throw UserError(fmt::format("{}: tensor '{}': external data '{}': {}", source_, tensor.name,
                                        where.location, what));
        };
        const fs::path location(where.location);
        if (location.is_absolute()) fail("an absolute path; ONNX external data is relative to the model's folder");
        for (const auto& part : location)
            if (part == "..") fail("leads out of the model's folder ('..')");
        const File& file = open_file(location, fail);
        const std::int64_t expected = expected_bytes(tensor);
        const std::int64_t length = where.length < 0 ? expected : where.length;
        if (length != expected)
            fail(fmt::format("{} bytes stored for {} {} elements ({} bytes)", length, tensor.element_count(),
                             to_string(tensor.data_type), expected));
        if (where.offset > file.size || length > file.size - where.offset)
            fail(fmt::format("bytes {}..{} lie beyond the end of the file ({} bytes); is the .data file the one "
                             "written with this model?", where.offset, where.offset + length, file.size));
        tensor.raw.resize(static_cast<std::size_t>(length));
        std::size_t done = 0;
        while (done < tensor.raw.size()) {
            const ssize_t n = pread(file.fd, tensor.raw.data() + done, tensor.raw.size() - done,
                                    static_cast<off_t>(where.offset) + static_cast<off_t>(done));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) fail(n < 0 ? std::generic_category().message(errno) : "file ended early");
            done += static_cast<std::size_t>(n);
        }
        tensor.external.reset();
    }

private:
    struct File {
        int fd = -1;
        std::int64_t size = 0;
    };

    static std::int64_t expected_bytes(const OnnxTensor& tensor) {
        // parse_tensor checked that the count and its byte size are representable.
        const auto bits = static_cast<std::int64_t>(element_bits(tensor.data_type));
        return (tensor.element_count() * bits + 7) / 8;
    }

    template <typename Fail>
    const File& open_file(const fs::path& location, const Fail& fail) {
        std::error_code ec;
        const fs::path canonical_folder = fs::weakly_canonical(folder_, ec);
        const fs::path path = fs::weakly_canonical(folder_ / location, ec);
        if (ec || !inside(canonical_folder, path)) fail("leads out of the model's folder");
        if (auto it = files_.find(path); it != files_.end()) return it->second;
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) fail(fmt::format("cannot open {}: {}", path.string(), std::generic_category().message(errno)));
        struct stat info {};
        if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
            close(fd);
            fail(fmt::format("{} is not a regular file", path.string()));
        }
        return files_.emplace(path, File{fd, static_cast<std::int64_t>(info.st_size)}).first->second;
    }

    fs::path folder_;
    std::string source_;
    std::map<fs::path, File> files_;
};

}  // namespace

void load_external_data(OnnxModel& model, const fs::path& folder, std::string_view source) {
    ExternalFiles files(folder.empty() ? fs::path(".") : folder, source);
    for_each_tensor(model, [&](OnnxTensor& tensor) {
        if (tensor.external) files.load(tensor);
    });
}

void reject_external_data(const OnnxModel& model, std::string_view source) {
    for_each_tensor(model, [&](const OnnxTensor& tensor) {
        if (tensor.external)
            throw UserError(fmt::format("{}: tensor '{}' keeps its data in an external file ('{}'); read the model "
                                        "from its file, beside that one", source, tensor.name,
                                        tensor.external->location));
    });
}

}  // namespace inferbench::models::onnx
