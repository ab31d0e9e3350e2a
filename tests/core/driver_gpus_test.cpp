// The GPUs of the driver's /proc listing: sorted by PCI address, the model read from each information file.
#include "core/driver_gpus.hpp"

#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"

namespace inferbench {
namespace {

TEST(DriverGpus, SortedByPciAddressWithTheirModel) {
    const testing::ScratchDir dir;
    for (const char* address : {"0000:3b:00.0", "0000:19:00.0", "0000:5d:00.0"})
        std::filesystem::create_directories(dir.path() / address);
    dir.write("0000:3b:00.0/information", "Model: \t NVIDIA H200 \nIRQ:   123\n");
    dir.write("0000:19:00.0/information", "Model:  NVIDIA H100 80GB HBM3\n");
    const auto gpus = driver_gpus(dir.path());
    ASSERT_EQ(gpus.size(), 3u);
    EXPECT_EQ(gpus[0].pci_address, "0000:19:00.0");
    EXPECT_EQ(gpus[0].model, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpus[1].model, "NVIDIA H200");
    EXPECT_EQ(gpus[2].model, "") << "no information file";
}

TEST(DriverGpus, NoDriverNoGpu) {
    const testing::ScratchDir dir;
    EXPECT_TRUE(driver_gpus(dir.path() / "absent").empty());
}

}  // namespace
}  // namespace inferbench
