#include "backends/registry.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "backends/null/null_backend.hpp"
#include "common/scratch_dir.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

TEST(Registry, NullIsBuiltIn) {
    const auto registry = BackendRegistry::discover({});
    auto backend = registry.create("null");
    EXPECT_EQ(backend->name(), "null");
    BenchmarkSpec spec;
    spec.model = "resnet50";
    EXPECT_EQ(backend->unsupported_reason(spec), "the null backend runs only the null model");
    spec.model = "null";
    EXPECT_FALSE(backend->unsupported_reason(spec));
}

TEST(Registry, FindsModulesInTheSearchPath) {
    const auto registry = BackendRegistry::discover({"/nonexistent", INFERBENCH_TEST_BACKEND_DIR});
    const auto names = registry.names();
    EXPECT_NE(std::find(names.begin(), names.end(), "fault"), names.end());
    auto backend = registry.create("fault");
    EXPECT_EQ(backend->name(), "fault");
    EXPECT_EQ(backend->options().front().name, "fault");
    bool listed = false;
    for (const auto& entry : registry.entries()) {
        if (entry.name == "fault") {
            listed = true;
            EXPECT_TRUE(entry.problem.empty()) << entry.problem;
            EXPECT_EQ(entry.description, "test backend that fails on purpose");
            EXPECT_EQ(entry.version, registry.create("fault")->version());
            ASSERT_EQ(entry.devices.size(), 2u);
            EXPECT_EQ(entry.devices[0].device, "cpu");
            EXPECT_EQ(entry.devices[0].problem, "");
            EXPECT_EQ(entry.devices[1].device, "cuda:0");
            EXPECT_EQ(entry.devices[1].problem, "backend fault does not run on cuda:0");
        }
    }
    EXPECT_TRUE(listed);
}

TEST(Registry, EntriesAskTheBackendsAtOnce) {
    // Two copies of the fault module, each of whose checks waits (up to 10 s) until the other's has begun:
    // asked one after another the first would wait it out; asked at once, both go on at once.
    testing::ScratchDir modules, rendezvous;
    const std::filesystem::path fault =
        std::filesystem::path(INFERBENCH_TEST_BACKEND_DIR) / "libinferbench_backend_fault.so";
    std::filesystem::copy_file(fault, modules.path() / "libinferbench_backend_fault.so");
    std::filesystem::copy_file(fault, modules.path() / "libinferbench_backend_faultcopy.so");
    setenv("FAULT_CHECK_RENDEZVOUS", rendezvous.path().c_str(), 1);
    const auto registry = BackendRegistry::discover({modules.path()});
    const auto start = std::chrono::steady_clock::now();
    const auto entries = registry.entries();
    const auto took = std::chrono::steady_clock::now() - start;
    unsetenv("FAULT_CHECK_RENDEZVOUS");
    ASSERT_GE(entries.size(), 4u);  // null and openai (built in), then the modules in the order found
    EXPECT_EQ(entries[1].name, "openai");
    EXPECT_EQ(entries[2].name, "fault");
    EXPECT_EQ(entries[3].name, "faultcopy");
    EXPECT_TRUE(entries[2].usable() && entries[3].usable()) << entries[2].problem << entries[3].problem;
    EXPECT_LT(took, std::chrono::seconds(8)) << "the checks ran one after another";
}

TEST(Registry, RefusesAModuleBuiltForAnotherApiVersion) {
    const auto registry = BackendRegistry::discover({INFERBENCH_TEST_BACKEND_DIR});
    try {
        registry.create("oldapi");
        FAIL() << "a module of another API version must be refused";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find("was built for backend API 999, this inferbench speaks " +
                                             std::to_string(kBackendApiVersion) + "; rebuild the module"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Registry, KnownButUnbuiltBackendsSayHowToGetThem) {
    const auto registry = BackendRegistry::discover({});
    const auto names = registry.names();
    EXPECT_NE(std::find(names.begin(), names.end(), "tensorrt"), names.end());
    try {
        registry.create("tensorrt");
        FAIL() << "tensorrt is not built here";
    } catch (const EnvironmentError& e) {
        EXPECT_STREQ(e.what(), "backend tensorrt is not built; install the TensorRT SDK, then rebuild");
    }
    EXPECT_THROW(registry.create("no-such-backend"), UserError);
}

TEST(Registry, DefaultUnsupportedReasonComesFromCapabilities) {
    const auto registry = BackendRegistry::discover({INFERBENCH_TEST_BACKEND_DIR});
    auto backend = registry.create("fault");
    BenchmarkSpec spec;
    spec.precision = Precision::int8;
    EXPECT_EQ(backend->unsupported_reason(spec), "backend fault has no int8 support");
    spec.precision = Precision::fp32;
    spec.device = Device{DeviceKind::cuda, 0};
    EXPECT_EQ(backend->unsupported_reason(spec), "backend fault does not run on cuda:0");
}

TEST(Registry, OneRuleJudgesACellAndABackendsUsability) {
    const auto registry = BackendRegistry::discover({INFERBENCH_TEST_BACKEND_DIR});
    BenchmarkSpec spec;
    EXPECT_EQ(cell_problem(nullptr, "backend x is not built", spec), "backend x is not built");
    auto backend = registry.create("fault");
    EXPECT_EQ(cell_problem(backend.get(), "", spec), std::nullopt);
    spec.precision = Precision::int8;
    EXPECT_EQ(cell_problem(backend.get(), "", spec), "backend fault has no int8 support");
    for (const auto& entry : registry.entries()) {
        EXPECT_EQ(entry.usable(), entry.problem.empty()) << entry.name;
        if (entry.name == "null" || entry.name == "fault") {
            EXPECT_TRUE(entry.usable()) << entry.problem;
        }
    }
}

// A backend whose own tool runs the iterations in a process of its own (as trtexec's does).
class OwnLoopBackend final : public Backend {
public:
    std::string name() const override { return "own-loop"; }
    std::string version() const override { return "1"; }
    Capabilities capabilities() const override {
        Capabilities caps;
        caps.devices = {DeviceKind::cpu, DeviceKind::cuda};
        caps.precisions = {Precision::fp32};
        caps.needs_model_file = false;
        caps.runs_own_loop = true;
        return caps;
    }
    void load(const std::string&, const BenchmarkSpec&) override {}
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor>) override {}
    void infer(DeviceTimes&) override {}
};

TEST(Registry, ABackendRunningItsOwnLoopTakesNeitherTheL2FlushNorASyncMode) {
    OwnLoopBackend backend;
    BenchmarkSpec spec;
    spec.backend = "own-loop";
    spec.device = Device{DeviceKind::cuda, 0};
    EXPECT_EQ(cell_problem(&backend, "", spec), std::nullopt);
    spec.conditions.l2_flush = true;
    EXPECT_EQ(cell_problem(&backend, "", spec),
              "own-loop runs its own iterations in a process of its own: l2_flush and sync apply to the harness's loop "
              "only; set l2_flush: false and sync: auto for this backend");
    spec.conditions.l2_flush = false;
    spec.conditions.sync = SyncMode::spin;
    EXPECT_TRUE(cell_problem(&backend, "", spec));
    spec.conditions.sync = SyncMode::automatic;
    spec.conditions.throttle_policy = ThrottlePolicy::discard;
    EXPECT_EQ(cell_problem(&backend, "", spec), std::nullopt) << "throttle flags are the analysis's, for any backend";
}

TEST(Registry, ABackendRunningItsOwnLoopIsGivenTheInputFilesToFeedItsTool) {
    OwnLoopBackend backend;
    BenchmarkSpec spec;
    spec.backend = "own-loop";
    spec.inputs = "/data/inputs.npz";
    EXPECT_EQ(cell_problem(&backend, "", spec), std::nullopt)
        << "trtexec and the Python runners take them; a backend that cannot says so in unsupported_reason";
    spec.backend = "null";
    spec.model = "null";
    EXPECT_EQ(cell_problem(make_null_backend().get(), "", spec), std::nullopt) << "the harness drives null";
}

}  // namespace
}  // namespace inferbench
