// Matching the present GPU to its catalog entry: every listed PCI id, the names nvidia-smi prints for the
// seed GPUs, and the variants that must not match (other memory sizes, other boards of the same chip).
#include <gtest/gtest.h>

#include "devices/catalog.hpp"
#include "devices/match.hpp"

namespace inferbench::devices {
namespace {

const Catalog& catalog() {
    static const Catalog c = parse_catalog(builtin_catalog_text(), "built-in");
    return c;
}

std::string key_of(std::string_view name, std::optional<std::uint32_t> pci = std::nullopt) {
    const auto match = match_gpu(catalog(), name, pci);
    return match.device ? match.device->key : "";
}

TEST(Match, NamesAsNvidiaSmiPrintsThem) {
    EXPECT_EQ(key_of("Tesla T4"), "t4");
    EXPECT_EQ(key_of("Tesla V100-PCIE-32GB"), "v100-pcie-32gb");
    EXPECT_EQ(key_of("NVIDIA A100-PCIE-40GB"), "a100-pcie-40gb");
    EXPECT_EQ(key_of("NVIDIA GeForce RTX 2080"), "rtx-2080");
    EXPECT_EQ(key_of("GeForce RTX 2080"), "rtx-2080");  // drivers before 460
    EXPECT_EQ(key_of("NVIDIA GeForce RTX 3080"), "rtx-3080");
    EXPECT_EQ(key_of("Xavier"), "jetson-agx-xavier");
    EXPECT_EQ(key_of("NVIDIA A10"), "a10");
    EXPECT_EQ(key_of("NVIDIA L4"), "l4");
    EXPECT_EQ(key_of("NVIDIA L40S"), "l40s");
    EXPECT_EQ(key_of("NVIDIA A100-SXM4-80GB"), "a100-sxm4-80gb");
    EXPECT_EQ(key_of("NVIDIA H100 80GB HBM3"), "h100-sxm");
    EXPECT_EQ(key_of("NVIDIA H100 PCIe"), "h100-pcie");
    EXPECT_EQ(key_of("NVIDIA H200"), "h200-sxm");
}

TEST(Match, EveryListedPciIdWinsOverTheName) {
    int ids = 0;
    for (const auto& device : catalog().devices) {
        for (const auto id : device.pci_device_ids) {
            const std::uint32_t nvml = static_cast<std::uint32_t>(id) << 16 | 0x10DE;
            const auto match = match_gpu(catalog(), "some other name", nvml);
            ASSERT_NE(match.device, nullptr) << std::hex << id;
            EXPECT_EQ(match.device->key, device.key);
            EXPECT_EQ(match_gpu(catalog(), "", id).device, match.device);  // a bare 16-bit id
            ++ids;
        }
    }
    EXPECT_GE(ids, 14);
    EXPECT_EQ(key_of("NVIDIA H200", 0x233510DE), "h200-sxm");
    EXPECT_EQ(match_gpu(catalog(), "NVIDIA H200", 0x233510DE).how, "PCI device id 0x2335");
    EXPECT_EQ(key_of("whatever", 0x1E8710DE), "rtx-2080");  // RTX 2080 Rev. A
    EXPECT_EQ(key_of("whatever", 0x221610DE), "rtx-3080");  // LHR
}

TEST(Match, TheSeedIdsAreTheOnesNvidiaUses) {
    EXPECT_EQ(key_of("", 0x2335), "h200-sxm");
    EXPECT_EQ(key_of("", 0x2330), "h100-sxm");
    EXPECT_EQ(key_of("", 0x2331), "h100-pcie");
    EXPECT_EQ(key_of("", 0x20B2), "a100-sxm4-80gb");
    EXPECT_EQ(key_of("", 0x20F1), "a100-pcie-40gb");
    EXPECT_EQ(key_of("", 0x1DB6), "v100-pcie-32gb");
    EXPECT_EQ(key_of("", 0x1EB8), "t4");
    EXPECT_EQ(key_of("", 0x2236), "a10");
    EXPECT_EQ(key_of("", 0x27B8), "l4");
    EXPECT_EQ(key_of("", 0x26B9), "l40s");
    EXPECT_EQ(key_of("", 0x1E82), "rtx-2080");
    EXPECT_EQ(key_of("", 0x2206), "rtx-3080");
}

TEST(Match, AnotherVendorsIdIsNotTakenForNvidias) {
    EXPECT_EQ(match_gpu(catalog(), "mystery", 0x23351002).device, nullptr);  // vendor 0x1002
    EXPECT_EQ(nvidia_device_id(0x23351002), std::nullopt);
    EXPECT_EQ(nvidia_device_id(0x233510DE), 0x2335);
}

TEST(Match, CasePrefixesAndSpacesDoNotMatter) {
    EXPECT_EQ(normalize_gpu_name("  NVIDIA   GeForce RTX 2080 "), "rtx 2080");
    EXPECT_EQ(normalize_gpu_name("Tesla V100-PCIE-32GB"), "v100-pcie-32gb");
    EXPECT_EQ(key_of("nvidia geforce rtx 2080"), "rtx-2080");
    EXPECT_EQ(key_of("NVIDIA V100-PCIE-32GB"), "v100-pcie-32gb");
    EXPECT_EQ(key_of("NVIDIA Tesla T4"), "t4");
}

TEST(Match, AMemorySizeWrittenDifferentlyMatchesOnlyTheSameSize) {
    using Split = std::pair<std::string, std::optional<double>>;
    EXPECT_EQ(split_memory_suffix("v100-pcie-32gb"), Split("v100-pcie", 32));
    EXPECT_EQ(split_memory_suffix("h100 80gb hbm3"), Split("h100", 80));
    EXPECT_EQ(split_memory_suffix("h200"), Split("h200", std::nullopt));
    const auto match = match_gpu(catalog(), "Tesla V100-PCIE 32GB", std::nullopt);
    ASSERT_NE(match.device, nullptr);
    EXPECT_EQ(match.device->key, "v100-pcie-32gb");
    EXPECT_EQ(match.how, "name 'Tesla V100-PCIE 32GB' (memory size written differently)");
    EXPECT_EQ(key_of("NVIDIA H100 80GB"), "h100-sxm");
    // Other boards of the same chip have other bandwidths: no roofs are better than wrong ones.
    EXPECT_EQ(key_of("Tesla V100-PCIE-16GB"), "");
    EXPECT_EQ(key_of("NVIDIA A100-SXM4-40GB"), "");
    EXPECT_EQ(key_of("NVIDIA A100-PCIE-80GB"), "");
}

TEST(Match, SiblingsAreNotConfused) {
    for (const char* name : {"NVIDIA A10G", "NVIDIA L40", "NVIDIA GeForce RTX 2080 SUPER", "NVIDIA GeForce RTX 2080 Ti",
                             "NVIDIA GeForce RTX 3080 Ti", "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA GH200 480GB"})
        EXPECT_EQ(key_of(name), "") << name;
}

TEST(Match, NoMatchSaysWhatToAdd) {
    EXPECT_EQ(no_match_message("NVIDIA B200", 0x290110DE),
              "no catalog entry for NVIDIA B200 (PCI device id 0x2901); add one to data/devices.yaml");
    EXPECT_EQ(no_match_message("Mystery", std::nullopt),
              "no catalog entry for Mystery (no PCI id); add one to data/devices.yaml");
}

}  // namespace
}  // namespace inferbench::devices
