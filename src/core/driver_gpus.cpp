#include "core/driver_gpus.hpp"

#include <algorithm>
#include <fstream>

#include "core/units.hpp"

namespace inferbench {

std::vector<DriverGpu> driver_gpus(const std::filesystem::path& root) {
    std::error_code ec;
    std::vector<DriverGpu> gpus;
    for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
        DriverGpu gpu{entry.path().filename().string(), {}};
        std::ifstream info(entry.path() / "information");
        std::string line;
        while (std::getline(info, line)) {
            if (line.starts_with("Model:")) gpu.model = std::string(trim(std::string_view(line).substr(6)));
        }
        gpus.push_back(std::move(gpu));
    }
    std::sort(gpus.begin(), gpus.end(), [](const auto& a, const auto& b) { return a.pci_address < b.pci_address; });
    return gpus;
}

}  // namespace inferbench
