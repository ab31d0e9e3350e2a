// A stand-in for libFuzzer's driver where a target cannot be built with clang (LibTorch 1.13's
// headers do not compile with clang 14 in C++20): random mutations of the seed inputs (bit flips,
// interesting bytes, inserted, erased and copied ranges, splices of two inputs), fed to
// LLVMFuzzerTestOneInput in this process, with no coverage feedback. Inputs that get past the
// reader and the loader (InferbenchFuzzLastInputLoaded()) join the pool. Before each run the input is
// written to crash-candidate.bin, so after a crash, an abort or a hang (a watchdog aborts a run
// over --timeout seconds) that file is the reproducer; `DRIVER FILE...` runs files once.
//
//   onnx_program_fuzz --max-total-time=600 --timeout=20 --memory-mb=4096 SEED_DIR...
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int InferbenchFuzzLastInputLoaded();

namespace {

using Bytes = std::vector<std::uint8_t>;
using Clock = std::chrono::steady_clock;

Bytes read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const Bytes& data) {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

class Mutator {
public:
    explicit Mutator(std::uint64_t seed) : rng_(seed) {}

    Bytes mutate(const Bytes& base, const Bytes& other) {
        Bytes b = base;
        const std::size_t rounds = 1 + below(4);
        for (std::size_t r = 0; r < rounds; ++r) step(b, other);
        return b;
    }

private:
    std::size_t below(std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

    void step(Bytes& b, const Bytes& other) {
        static constexpr std::uint8_t kInteresting[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x10, 0x12, 0x1a, 0x22};
        switch (below(6)) {
            case 0:
                if (!b.empty()) b[below(b.size())] ^= static_cast<std::uint8_t>(1U << below(8));
                break;
            case 1:
                if (!b.empty()) b[below(b.size())] = kInteresting[below(std::size(kInteresting))];
                break;
            case 2:  // insert interesting bytes
                b.insert(b.begin() + static_cast<std::ptrdiff_t>(below(b.size() + 1)), 1 + below(4),
                         kInteresting[below(std::size(kInteresting))]);
                break;
            case 3:  // erase a range
                if (!b.empty()) {
                    const std::size_t at = below(b.size());
                    const std::size_t n = 1 + below(std::min<std::size_t>(16, b.size() - at));
                    b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
                }
                break;
            case 4:  // copy a range of this input elsewhere
                if (b.size() > 1) {
                    const std::size_t from = below(b.size());
                    const std::size_t n = 1 + below(std::min<std::size_t>(64, b.size() - from));
                    const Bytes chunk(b.begin() + static_cast<std::ptrdiff_t>(from),
                                      b.begin() + static_cast<std::ptrdiff_t>(from + n));
                    b.insert(b.begin() + static_cast<std::ptrdiff_t>(below(b.size() + 1)), chunk.begin(), chunk.end());
                }
                break;
            default:  // splice: this input's head, the other's tail
                if (!other.empty()) {
                    b.resize(below(b.size() + 1));
                    b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(below(other.size())), other.end());
                }
        }
    }

    std::mt19937_64 rng_;
};

struct Options {
    double max_total_time = 600;
    double timeout = 20;
    std::size_t memory_mb = 4096;
    std::vector<std::filesystem::path> paths;
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--max-total-time=", 0) == 0) {
            o.max_total_time = std::stod(arg.substr(17));
        } else if (arg.rfind("--timeout=", 0) == 0) {
            o.timeout = std::stod(arg.substr(10));
        } else if (arg.rfind("--memory-mb=", 0) == 0) {
            o.memory_mb = std::stoul(arg.substr(12));
        } else {
            o.paths.emplace_back(arg);
        }
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options options = parse(argc, argv);
    // A hostile shape's allocation fails (an error the target reports) instead of taking the machine.
    const rlimit memory{options.memory_mb << 20, options.memory_mb << 20};
    setrlimit(RLIMIT_AS, &memory);
    LLVMFuzzerInitialize(&argc, &argv);
    std::vector<Bytes> pool;
    bool replay = false;
    for (const auto& path : options.paths) {
        if (std::filesystem::is_directory(path)) {
            for (const auto& entry : std::filesystem::directory_iterator(path)) pool.push_back(read_file(entry.path()));
        } else {
            pool.push_back(read_file(path));
            replay = true;
        }
    }
    if (pool.empty()) {
        std::cerr << "no seed inputs\n";
        return 2;
    }
    std::atomic<std::int64_t> started_ns{-1};
    std::thread([&] {
        for (;;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            const std::int64_t s = started_ns.load();
            const auto now = Clock::now().time_since_epoch().count();
            if (s >= 0 && static_cast<double>(now - s) > options.timeout * 1e9) {
                std::cerr << "TIMEOUT: a run took over " << options.timeout << " s; input in crash-candidate.bin\n";
                std::abort();
            }
        }
    }).detach();
    const auto run = [&](const Bytes& input) {
        write_file("crash-candidate.bin", input);
        started_ns = Clock::now().time_since_epoch().count();
        LLVMFuzzerTestOneInput(input.data(), input.size());
        started_ns = -1;
        return InferbenchFuzzLastInputLoaded() != 0;
    };
    if (replay) {
        for (const Bytes& input : pool) run(input);
        std::cout << "ran " << pool.size() << " inputs\n";
        return 0;
    }
    Mutator mutator(std::random_device{}());
    std::mt19937_64 pick(1);
    const auto begin = Clock::now();
    std::uint64_t executions = 0;
    std::uint64_t loaded = 0;
    for (;;) {
        const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
        if (elapsed > options.max_total_time) break;
        const Bytes& base = pool[pick() % pool.size()];
        const Bytes& other = pool[pick() % pool.size()];
        Bytes input = mutator.mutate(base, other);
        if (input.size() > (1U << 16)) continue;
        ++executions;
        if (run(input)) {
            ++loaded;
            if (pool.size() < 4096) pool.push_back(std::move(input));
        }
        if (executions % 10000 == 0) {
            std::cout << "#" << executions << " loaded " << loaded << " pool " << pool.size() << " in " << elapsed
                      << " s" << std::endl;
        }
    }
    std::cout << "done: " << executions << " executions, " << loaded << " loaded and prepared, no crash\n";
    std::remove("crash-candidate.bin");
    return 0;
}
