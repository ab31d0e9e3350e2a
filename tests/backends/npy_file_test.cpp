// .npy files: what inferbench writes (`models check --save`) it reads back, and NumPy's header layout.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/npy_file.hpp"
#include "common/scratch_dir.hpp"
#include "core/file_io.hpp"

namespace inferbench {
namespace {

HostTensor tensor(std::string name, DType dtype, std::vector<std::int64_t> shape) {
    HostTensor t{{std::move(name), dtype, std::move(shape)}, {}};
    t.data.resize(t.info.byte_size());
    for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<std::byte>(i * 7 + 1);
    return t;
}

TEST(NpyFile, WrittenFilesReadBackByteForByte) {
    testing::ScratchDir dir;
    for (const HostTensor& t : {tensor("logits", DType::f32, {2, 3}), tensor("ids", DType::i64, {4}),
                                tensor("half", DType::f16, {1, 2, 2}), tensor("scalar", DType::f32, {})}) {
        const auto path = dir.path() / (t.info.name + ".npy");
        write_npy_file(path, t);
        const HostTensor back = read_npy_file(path, t.info.name);
        EXPECT_EQ(back.info.dtype, t.info.dtype) << t.info.name;
        EXPECT_EQ(back.info.shape, t.info.shape) << t.info.name;
        EXPECT_EQ(back.data, t.data) << t.info.name;
    }
}

TEST(NpyFile, HeaderIsNumpysVersionOneLayout) {
    testing::ScratchDir dir;
    write_npy_file(dir.path() / "a.npy", tensor("a", DType::f32, {3}));
    const std::string bytes = read_regular_file(dir.path() / "a.npy");
    ASSERT_GT(bytes.size(), 10u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const std::size_t header = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(bytes[9]) << 8U);
    EXPECT_EQ((10 + header) % 64, 0u) << "the data starts 64-byte aligned";
    EXPECT_NE(bytes.find("'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), std::string::npos);
    EXPECT_EQ(bytes[10 + header - 1], '\n');
    EXPECT_EQ(bytes.size(), 10 + header + 12);
}

}  // namespace
}  // namespace inferbench
