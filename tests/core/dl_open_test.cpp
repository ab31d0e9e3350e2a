#include "core/dl_open.hpp"

#include <gtest/gtest.h>

namespace inferbench {
namespace {

TEST(DlopenFirst, TheFirstCandidateThatOpensIsTaken) {
    const OpenedLibrary opened = dlopen_first({"libinferbench-no-such-library.so.7", "libc.so.6"});
    ASSERT_NE(opened.handle, nullptr);
    EXPECT_EQ(opened.path, "libc.so.6");
    EXPECT_TRUE(opened.tried.empty());
    dlclose(opened.handle);
}

TEST(DlopenFirst, WhereNoneOpensEachOnesReasonIsKept) {
    const OpenedLibrary opened = dlopen_first({"libinferbench-no-such-a.so", "/nonexistent/libb.so"});
    EXPECT_EQ(opened.handle, nullptr);
    EXPECT_TRUE(opened.path.empty());
    EXPECT_NE(opened.tried.find("libinferbench-no-such-a.so"), std::string::npos) << opened.tried;
    EXPECT_NE(opened.tried.find("; "), std::string::npos) << opened.tried;
    EXPECT_NE(opened.tried.find("/nonexistent/libb.so"), std::string::npos) << opened.tried;
}

}  // namespace
}  // namespace inferbench
