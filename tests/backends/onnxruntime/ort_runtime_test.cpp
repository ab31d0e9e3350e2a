// Which ONNX Runtime the backend opens: the search order, the library found in a folder, and one
// clear error for a location without one.
#include "backends/onnxruntime/ort_runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "core/error.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<std::string> origins(const std::vector<RuntimeCandidate>& candidates) {
    std::vector<std::string> out;
    for (const auto& c : candidates) out.push_back(c.origin + ": " + c.location.string());
    return out;
}

TEST(OrtRuntime, AnExplicitLocationIsTheOnlyCandidate) {
    EXPECT_THAT(origins(runtime_candidates("/opt/ort", "/env/ort", "/b/backends", "/built/lib/libonnxruntime.so.1")),
                ::testing::ElementsAre("backend option runtime: /opt/ort"));
    EXPECT_THAT(origins(runtime_candidates("", "/env/ort", "/b/backends", "/built/lib/libonnxruntime.so.1")),
                ::testing::ElementsAre("INFERBENCH_ONNXRUNTIME_ROOT: /env/ort"));
}

TEST(OrtRuntime, ByDefaultTheBundleThenTheBuild) {
    EXPECT_THAT(origins(runtime_candidates("", "", "/dist/backends", "/built/lib/libonnxruntime.so.1")),
                ::testing::ElementsAre("bundled: /dist/backends", "bundled: /dist/lib",
                                       "built with: /built/lib/libonnxruntime.so.1"));
}

class OrtRuntimeFolders : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("ort-runtime-test-" + std::to_string(::getpid()));
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::filesystem::path touch(const std::filesystem::path& relative) {
        const auto path = dir_ / relative;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path) << "not a library";
        return path;
    }
    std::filesystem::path dir_;
};

TEST_F(OrtRuntimeFolders, FindsTheLibraryInAFolderItsLibOrAWheelsCapi) {
    EXPECT_EQ(find_runtime_library(dir_), std::nullopt);
    const auto wheel = touch("capi/libonnxruntime.so.1.23.2");
    EXPECT_EQ(find_runtime_library(dir_ / "capi"), wheel);
    const auto release = touch("release/lib/libonnxruntime.so.1");
    touch("release/lib/libonnxruntime.so.1.29.0");
    EXPECT_EQ(find_runtime_library(dir_ / "release"), release);
    EXPECT_EQ(find_runtime_library(wheel), wheel);  // a file is taken as it is
    EXPECT_EQ(find_runtime_library(dir_ / "missing"), std::nullopt);
}

TEST_F(OrtRuntimeFolders, AWrongLocationIsAnErrorNamingIt) {
    try {
        OrtRuntime::open((dir_ / "empty").string());
        FAIL() << "no error";
    } catch (const EnvironmentError& e) {
        EXPECT_THAT(e.what(), AllOf(HasSubstr("no ONNX Runtime library (libonnxruntime.so.1) in " + (dir_ / "empty").string()),
                                    HasSubstr("scripts/fetch-onnxruntime.sh"), HasSubstr("option runtime")));
    }
    const auto fake = touch("fake/libonnxruntime.so.1");
    EXPECT_THAT([&] { OrtRuntime::open(fake.string()); },
                ::testing::ThrowsMessage<EnvironmentError>(HasSubstr("cannot load ONNX Runtime " + fake.string())));
}

TEST(OrtRuntime, TheDefaultIsOpenedOnceAndSaysWhereItIsFrom) {
    const OrtRuntime& runtime = OrtRuntime::open("");
    EXPECT_THAT(runtime.version(), ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
    EXPECT_EQ(runtime.description(),
              runtime.version() + " (" + runtime.library().string() + ", " + runtime.origin() + ")");
    // The same library named explicitly is the same runtime, not a second copy.
    EXPECT_EQ(&OrtRuntime::open(runtime.folder().string()), &runtime);
}

}  // namespace
}  // namespace inferbench
