// Where the CUDA probe looks for cuBLASLt, on scratch folders laid out as the machines have them.
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "devices/cublaslt_search.hpp"

namespace inferbench::devices {
namespace {

class CublasLtSearchTest : public ::testing::Test {
protected:
    std::filesystem::path touch(const std::string& relative) {
        const auto path = scratch_.path() / relative;
        std::filesystem::create_directories(path.parent_path());
        scratch_.write(relative, "x");
        return path;
    }
    CublasLtSearch search() {
        CublasLtSearch s;
        s.system_dirs = {scratch_.path() / "usr/local/cuda/lib64"};
        s.site_dirs = [this] {
            ++site_calls_;
            return std::vector<std::filesystem::path>{scratch_.path() / "venv/site-packages",
                                                      scratch_.path() / "user/site"};
        };
        return s;
    }
    testing::ScratchDir scratch_;
    int site_calls_ = 0;
};

TEST_F(CublasLtSearchTest, TheEnvironmentVariableComesFirstAndMustExist) {
    const auto lib = touch("custom/libcublasLt.so.13");
    touch("ld/libcublasLt.so.13");
    auto s = search();
    s.env_library = lib.string();
    s.ld_library_path = (scratch_.path() / "ld").string();
    EXPECT_EQ(find_cublaslt(s).library, lib.string());
    EXPECT_EQ(find_cublaslt(s).how, "INFERBENCH_CUBLASLT_LIBRARY");
    s.env_library = (scratch_.path() / "missing.so").string();
    try {
        find_cublaslt(s);
        FAIL();
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("missing.so: no such file"), std::string::npos) << e.what();
    }
    EXPECT_EQ(site_calls_, 0);
}

TEST_F(CublasLtSearchTest, LdLibraryPathFoldersInOrderVersion13First) {
    touch("a/libcublasLt.so.12");
    touch("b/libcublasLt.so.13");
    auto s = search();
    s.ld_library_path = "::" + (scratch_.path() / "empty").string() + ":" + (scratch_.path() / "a").string() + ":" +
                        (scratch_.path() / "b").string();
    const auto choice = find_cublaslt(s);
    EXPECT_EQ(choice.library, (scratch_.path() / "a/libcublasLt.so.12").string());
    EXPECT_EQ(choice.how, "LD_LIBRARY_PATH");
    EXPECT_EQ(site_calls_, 0);  // Python is not asked when a folder already has it
}

TEST_F(CublasLtSearchTest, PyTorchWheelsCuda13BeforeCuda12) {
    touch("user/site/nvidia/cublas/lib/libcublasLt.so.12");
    touch("user/site/nvidia/cu13/lib/libcublasLt.so.13");
    touch("usr/local/cuda/lib64/libcublasLt.so.13");
    const auto choice = find_cublaslt(search());
    EXPECT_EQ(choice.library, (scratch_.path() / "user/site/nvidia/cu13/lib/libcublasLt.so.13").string());
    EXPECT_EQ(choice.how, "Python site-packages");
    EXPECT_EQ(site_calls_, 1);
}

TEST_F(CublasLtSearchTest, Cuda12WheelsAndThenTheToolkit) {
    touch("venv/site-packages/nvidia/cublas/lib/libcublasLt.so.12");
    EXPECT_EQ(find_cublaslt(search()).library,
              (scratch_.path() / "venv/site-packages/nvidia/cublas/lib/libcublasLt.so.12").string());
    std::filesystem::remove_all(scratch_.path() / "venv");
    touch("usr/local/cuda/lib64/libcublasLt.so.13");
    const auto choice = find_cublaslt(search());
    EXPECT_EQ(choice.library, (scratch_.path() / "usr/local/cuda/lib64/libcublasLt.so.13").string());
    EXPECT_EQ(choice.how, "CUDA toolkit");
}

TEST_F(CublasLtSearchTest, NothingFoundLeavesItToTheDynamicLoader) {
    const auto choice = find_cublaslt(search());
    EXPECT_EQ(choice.library, "");
    EXPECT_EQ(choice.how, "the dynamic loader (libcublasLt.so.13, then .so.12)");
}

}  // namespace
}  // namespace inferbench::devices
