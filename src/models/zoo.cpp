#include "models/zoo.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "models/zoo_builders.hpp"

namespace inferbench::models {

namespace fs = std::filesystem;

namespace {

// Bump whenever any builder's output bytes change, so caches written by older versions are not
// mistaken for current ones.
constexpr int kGeneratorVersion = 1;

using BuildFn = GraphBuilder (*)(std::uint64_t seed);

struct ZooEntry {
    ZooModel model;
    BuildFn build;  // nullptr: no file
};

const std::vector<ZooEntry>& entries() {
    static const std::vector<ZooEntry> table = {
        {{"resnet50", "ResNet-50 v1.5 image classifier, 224x224 RGB, 1000 classes",
          "He et al., Deep Residual Learning for Image Recognition, CVPR 2016 (arXiv:1512.03385); "
          "v1.5 as torchvision and MLPerf Inference",
          25'557'032},
         &build_resnet50},
        {{"mobilenet", "MobileNet v1 1.0 224 image classifier, 224x224 RGB, 1000 classes",
          "Howard et al., MobileNets: Efficient Convolutional Neural Networks for Mobile Vision "
          "Applications, 2017 (arXiv:1704.04861); layout as TF-slim mobilenet_v1",
          4'231'976},
         &build_mobilenet},
        // The MLPerf Inference BERT model is BertForQuestionAnswering (SQuAD v1.1, sequence 384):
        // BERT without its pooler, plus a Linear(hidden, 2) span head. The paper rounds ("BERT-large
        // 340M, BERT-base 110M", Devlin et al. 2018); these are the exact counts of HuggingFace's
        // bert-large-uncased / bert-base-uncased BertForQuestionAnswering (BertModel's 335,141,888
        // and 109,482,240, less the pooler, plus the head).
        {{"bert",
          "BERT-large uncased with the SQuAD span head (MLPerf Inference BERT), 24 layers, hidden 1024, "
          "16 heads, sequence length 384",
          "Devlin et al., BERT: Pre-training of Deep Bidirectional Transformers for Language "
          "Understanding, NAACL 2019 (arXiv:1810.04805); as HuggingFace BertForQuestionAnswering, "
          "the MLPerf Inference SQuAD v1.1 model",
          334'094'338},
         &build_bert_large},
        {{"bert-base",
          "BERT-base uncased with the SQuAD span head, 12 layers, hidden 768, 12 heads, sequence length 384",
          "Devlin et al., BERT: Pre-training of Deep Bidirectional Transformers for Language "
          "Understanding, NAACL 2019 (arXiv:1810.04805); as HuggingFace BertForQuestionAnswering",
          108'893'186},
         &build_bert_base},
        {{"null", "No model: the null backend's empty workload, for measuring harness overhead", "inferbench",
          0},
         nullptr},
    };
    return table;
}

const ZooEntry* find_entry(std::string_view name) {
    const auto& table = entries();
    const auto it =
        std::ranges::find(table, name, [](const ZooEntry& e) { return std::string_view(e.model.name); });
    return it == table.end() ? nullptr : &*it;
}

const ZooEntry& exportable_entry(std::string_view name) {
    const ZooEntry* entry = find_entry(name);
    if (entry == nullptr) {
        throw UserError(
            fmt::format("unknown zoo model '{}'; valid names: {}", name, fmt::join(zoo_names(), ", ")));
    }
    if (entry->build == nullptr) {
        throw UserError(fmt::format(
            "zoo model '{}' has no file to export: it is the null backend's empty workload", name));
    }
    return *entry;
}

// iostreams need not set errno; 0 would read "Success".
std::string errno_message(int error) {
    return error == 0 ? std::string("I/O error") : std::generic_category().message(error);
}

// Flushes a file (or directory) to disk, so a crash after the rename cannot leave a
// complete-looking name with missing contents. Best effort: not every file system supports it.
void sync_path(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

// A temp file in the target's directory, removed unless committed (renamed over the target).
class TempFile {
public:
    explicit TempFile(const fs::path& target) : target_(target) {
        static std::atomic<unsigned> counter{0};
        // Hidden, and unique per process and per call: concurrent exports never share one.
        path_ = target.parent_path() /
                fmt::format(".{}.tmp-{}-{}", target.filename().string(), ::getpid(), counter.fetch_add(1));
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        if (!committed_) {
            std::error_code ignored;
            fs::remove(path_, ignored);
        }
    }

    const fs::path& path() const { return path_; }

    void commit() {
        sync_path(path_);
        std::error_code ec;
        fs::rename(path_, target_, ec);
        if (ec) {
            throw EnvironmentError(
                fmt::format("cannot rename {} to {}: {}", path_.string(), target_.string(), ec.message()));
        }
        committed_ = true;
        sync_path(target_.parent_path());
    }

private:
    fs::path target_;
    fs::path path_;
    bool committed_ = false;
};

// Removes temp files that exports of `target` killed mid-write left behind. Only old ones: a live
// export (in this or another process sharing the cache) finishes within seconds.
void remove_stale_temp_files(const fs::path& target) {
    constexpr auto kStaleAfter = std::chrono::hours(1);
    const std::string prefix = fmt::format(".{}.tmp-", target.filename().string());
    const auto now = fs::file_time_type::clock::now();
    std::error_code ec;
    for (fs::directory_iterator it(target.parent_path().empty() ? "." : target.parent_path(), ec), end;
         !ec && it != end; it.increment(ec)) {
        std::error_code entry_ec;
        const auto written = it->last_write_time(entry_ec);
        if (it->path().filename().string().starts_with(prefix) && !entry_ec && now - written > kStaleAfter) {
            fs::remove(it->path(), entry_ec);
        }
    }
}

void write_model(const GraphBuilder& graph, const fs::path& target) {
    remove_stale_temp_files(target);

    TempFile temp(target);
    errno = 0;
    std::ofstream out(temp.path(), std::ios::binary | std::ios::trunc);
    if (!out) {
        throw EnvironmentError(
            fmt::format("cannot create {}: {}", temp.path().string(), errno_message(errno)));
    }
    graph.write(out);
    out.close();
    if (!out) {
        throw EnvironmentError(
            fmt::format("cannot write {}: {} (disk full? set another model cache directory)",
                        temp.path().string(), errno_message(errno)));
    }
    temp.commit();
}

}  // namespace

const std::vector<ZooModel>& zoo() {
    static const std::vector<ZooModel> models = [] {
        std::vector<ZooModel> out;
        for (const auto& e : entries()) out.push_back(e.model);
        return out;
    }();
    return models;
}

const ZooModel* find_zoo_model(std::string_view name) {
    const ZooEntry* entry = find_entry(name);
    return entry == nullptr ? nullptr : &zoo()[static_cast<std::size_t>(entry - entries().data())];
}

std::vector<std::string> zoo_names() {
    std::vector<std::string> names;
    for (const auto& m : zoo()) names.push_back(m.name);
    return names;
}

GraphBuilder build_zoo_model(std::string_view name, std::uint64_t seed) {
    const ZooEntry& entry = exportable_entry(name);
    GraphBuilder graph = entry.build(seed);
    graph.set_producer_version(fmt::format("zoo-g{}", kGeneratorVersion));
    graph.set_doc_string(fmt::format("{}. Random weights (seed {}), for benchmarking only. Source: {}",
                                     entry.model.description, seed, entry.model.source));
    graph.add_metadata("inferbench.zoo_model", std::string(name));
    graph.add_metadata("inferbench.generator_version", std::to_string(kGeneratorVersion));
    graph.add_metadata("inferbench.seed", std::to_string(seed));
    return graph;
}

fs::path export_onnx(std::string_view name, const fs::path& cache_dir, std::uint64_t seed) {
    exportable_entry(name);  // name errors first, before touching the file system
    const fs::path target = cache_dir / fmt::format("{}-g{}-s{}.onnx", name, kGeneratorVersion, seed);
    std::error_code ec;
    if (fs::is_regular_file(target, ec)) {
        return target;  // complete by construction: only a finished temp file is ever renamed here
    }
    if (!cache_dir.empty()) fs::create_directories(cache_dir, ec);  // empty: the working directory
    if (ec) {
        throw EnvironmentError(
            fmt::format("cannot create model cache directory {}: {}", cache_dir.string(), ec.message()));
    }
    write_model(build_zoo_model(name, seed), target);
    return target;
}

}  // namespace inferbench::models
