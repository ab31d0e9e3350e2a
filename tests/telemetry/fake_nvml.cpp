// A stand-in libnvidia-ml for the tests and the sampling-cost bench: exactly the NVML functions
// inferbench opens, with its signatures, answering scripted values. Without a script it is a host of
// two GPUs with every metric; FAKE_NVML_SCRIPT=FILE (lines "key = value", '#' comments) changes that:
//   init = 9                       nvmlInit_v2 fails with that code (9: Driver Not Loaded)
//   count = 1                      number of GPUs
//   driver = 580.65.06
//   gpuN.KEY = VALUE | error:CODE  a metric's value, or the error its query returns (3: Not Supported)
// KEYs: name uuid bus_id device_id power_instant_mw power_average_mw memory_temp field_values
// power_usage_mw energy_mj (at nvmlInit; it then rises with power_instant_mw) power_limit_mw temperature
// clock_sm clock_mem clock_graphics default_clock_sm default_clock_graphics (default applications clocks) utilization util_gpu util_memory memory memory_total_mib
// memory_used_mib pcie_tx_kbs pcie_rx_kbs pstate clock_events processes ("PID:MiB,...", PID "children":
// every child of the calling process, "self": the calling process) cpu_affinity (a CPU list, "0-3,8"; none
// scripted: Not Supported).
// Built with FAKE_NVML_LEGACY it is an older driver's library: no nvmlDeviceGetFieldValues, clock
// events only as nvmlDeviceGetCurrentClocksThrottleReasons.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/nvml_api.hpp"

using namespace inferbench::telemetry::nvml_api;

struct inferbench::telemetry::nvml_api::nvmlDevice_st {
    int index;
};

namespace {

constexpr int kMaxGpus = 8;
nvmlDevice_st g_devices[kMaxGpus] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
std::map<std::string, std::string> g_script;
std::map<std::string, long, std::less<>> g_calls;
std::mutex g_mutex;
bool g_initialized = false;
std::chrono::steady_clock::time_point g_init_time;

const std::map<std::string, std::string>& defaults(int gpu) {
    static const std::map<std::string, std::string> gpu0 = {
        {"name", "Fake H200"}, {"uuid", "GPU-fake-0000"}, {"bus_id", "00000000:19:00.0"}, {"device_id", "0x233510DE"},
        {"power_instant_mw", "300500"}, {"power_average_mw", "298000"}, {"memory_temp", "48"},
        {"power_usage_mw", "298000"}, {"energy_mj", "1000000"}, {"power_limit_mw", "700000"}, {"temperature", "41"},
        {"clock_sm", "1980"}, {"clock_mem", "3201"}, {"clock_graphics", "1980"}, {"default_clock_sm", "1980"},
        {"default_clock_graphics", "1980"}, {"util_gpu", "97"}, {"util_memory", "45"},
        {"memory_total_mib", "143771"}, {"memory_used_mib", "20480"}, {"pcie_tx_kbs", "1000"}, {"pcie_rx_kbs", "2000"},
        {"pstate", "0"}, {"clock_events", "0"}, {"processes", "children:512,1:1000"}};
    static const std::map<std::string, std::string> gpu1 = [] {
        auto m = gpu0;
        m["name"] = "Fake H200 (second)";
        m["uuid"] = "GPU-fake-0001";
        m["bus_id"] = "00000000:3B:00.0";
        m["power_instant_mw"] = "150000";
        m["power_average_mw"] = "149000";
        m["temperature"] = "35";
        m["clock_events"] = "0x1";
        m["processes"] = "";
        return m;
    }();
    return gpu == 0 ? gpu0 : gpu1;
}

void load_script() {
    g_script.clear();
    const char* path = std::getenv("FAKE_NVML_SCRIPT");
    if (!path || !*path) return;
    std::ifstream in(path);
    std::string line;
    const auto trim = [](std::string s) {
        s.erase(0, s.find_first_not_of(" \t"));
        s.erase(s.find_last_not_of(" \t\r") + 1);
        return s;
    };
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        const auto eq = line.find('=');
        if (eq != std::string::npos) g_script[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
    }
}

std::string setting(const std::string& key, const std::string& fallback) {
    const auto it = g_script.find(key);
    return it == g_script.end() ? fallback : it->second;
}

// The value of gpuN.KEY: its text, or the error code scripted for it.
struct Value {
    std::string text;
    nvmlReturn_t error = NVML_SUCCESS;
    unsigned long long number = 0;
};

// Every GPU's values, the defaults overridden by the script, made once at nvmlInit so that a query
// costs a lookup (the sampling-cost bench measures inferbench, not this fake).
std::vector<std::map<std::string, Value, std::less<>>> g_values;

void build_values() {
    g_values.assign(kMaxGpus, {});
    for (int gpu = 0; gpu < kMaxGpus; ++gpu) {
        std::map<std::string, std::string> texts(defaults(gpu).begin(), defaults(gpu).end());
        const std::string prefix = "gpu" + std::to_string(gpu) + ".";
        for (const auto& [key, text] : g_script)
            if (key.starts_with(prefix)) texts[key.substr(prefix.size())] = text;
        for (const auto& [key, text] : texts) {
            Value v;
            if (text.starts_with("error:")) v.error = static_cast<nvmlReturn_t>(std::atoi(text.c_str() + 6));
            else v = {text, NVML_SUCCESS, std::strtoull(text.c_str(), nullptr, 0)};
            g_values[static_cast<std::size_t>(gpu)][key] = v;
        }
    }
}

const Value& value(nvmlDevice_t device, std::string_view key) {
    static const Value none;
    const std::lock_guard lock(g_mutex);
    auto calls = g_calls.find(key);
    if (calls == g_calls.end()) calls = g_calls.emplace(std::string(key), 0).first;
    ++calls->second;
    const auto& values = g_values[static_cast<std::size_t>(device->index)];
    const auto it = values.find(key);
    return it == values.end() ? none : it->second;
}

nvmlReturn_t check(nvmlDevice_t device) {
    if (!g_initialized) return NVML_ERROR_UNINITIALIZED;
    if (!device) return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}

template <typename T>
nvmlReturn_t number(nvmlDevice_t device, const char* key, T* out) {
    if (const nvmlReturn_t rc = check(device); rc != NVML_SUCCESS) return rc;
    const Value& v = value(device, key);
    if (v.error != NVML_SUCCESS) return v.error;
    *out = static_cast<T>(v.number);
    return NVML_SUCCESS;
}

nvmlReturn_t text(nvmlDevice_t device, const char* key, char* out, unsigned int length) {
    if (const nvmlReturn_t rc = check(device); rc != NVML_SUCCESS) return rc;
    const Value& v = value(device, key);
    if (v.error != NVML_SUCCESS) return v.error;
    if (v.text.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    std::memcpy(out, v.text.c_str(), v.text.size() + 1);
    return NVML_SUCCESS;
}

std::vector<unsigned int> children_of_caller() {
    std::vector<unsigned int> pids;
    std::error_code ec;
    for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
        std::ifstream stat(it->path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        const auto close = line.rfind(')');
        if (close == std::string::npos) continue;
        unsigned int pid = 0, ppid = 0;
        char state = 0;
        if (std::sscanf(line.c_str(), "%u", &pid) == 1 && std::sscanf(line.c_str() + close + 1, " %c %u", &state, &ppid) == 2 &&
            ppid == static_cast<unsigned int>(getpid()))
            pids.push_back(pid);
    }
    return pids;
}

}  // namespace

extern "C" {

// For the tests: how often gpuN.KEY was asked for, summed over the GPUs.
long fake_nvml_calls(const char* key) {
    const std::lock_guard lock(g_mutex);
    const auto it = g_calls.find(std::string_view(key));
    return it == g_calls.end() ? 0 : it->second;
}

nvmlReturn_t nvmlInit_v2() {
    load_script();
    const int rc = std::atoi(setting("init", "0").c_str());
    if (rc != 0) return rc;
    g_initialized = true;
    g_init_time = std::chrono::steady_clock::now();
    g_calls.clear();
    build_values();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown() {
    g_initialized = false;
    return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
        case NVML_SUCCESS: return "Success";
        case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
        case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
        case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
        case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
        case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
        case NVML_ERROR_NO_DATA: return "No data";
        default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
    const std::string v = setting("driver", "580.65.06");
    if (v.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    std::memcpy(version, v.c_str(), v.size() + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
    if (!g_initialized) return NVML_ERROR_UNINITIALIZED;
    *count = static_cast<unsigned int>(std::atoi(setting("count", "2").c_str()));
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
    if (!g_initialized) return NVML_ERROR_UNINITIALIZED;
    if (index >= static_cast<unsigned int>(std::atoi(setting("count", "2").c_str())) || index >= kMaxGpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &g_devices[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int length) { return text(d, "name", name, length); }
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int length) { return text(d, "uuid", uuid, length); }

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
    if (const nvmlReturn_t rc = check(d); rc != NVML_SUCCESS) return rc;
    *pci = {};
    if (const nvmlReturn_t rc = text(d, "bus_id", pci->busId, sizeof(pci->busId)); rc != NVML_SUCCESS) return rc;
    return number(d, "device_id", &pci->pciDeviceId);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) { return number(d, "power_usage_mw", mw); }
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int* mw) { return number(d, "power_limit_mw", mw); }

// Rises with power_instant_mw since nvmlInit, as a real counter rises with the power drawn.
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) {
    if (const nvmlReturn_t rc = number(d, "energy_mj", mj); rc != NVML_SUCCESS) return rc;
    const Value& power = value(d, "power_instant_mw");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_init_time).count();
    *mj += static_cast<unsigned long long>(static_cast<double>(power.number) * seconds);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int* celsius) {
    if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    return number(d, "temperature", celsius);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int* mhz) {
    if (type == NVML_CLOCK_SM) return number(d, "clock_sm", mhz);
    if (type == NVML_CLOCK_MEM) return number(d, "clock_mem", mhz);
    if (type == NVML_CLOCK_GRAPHICS) return number(d, "clock_graphics", mhz);
    return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t d, int type, unsigned int* mhz) {
    if (type == NVML_CLOCK_SM) return number(d, "default_clock_sm", mhz);
    if (type == NVML_CLOCK_GRAPHICS) return number(d, "default_clock_graphics", mhz);
    return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* utilization) {
    if (const nvmlReturn_t rc = check(d); rc != NVML_SUCCESS) return rc;
    if (const Value& v = value(d, "utilization"); v.error != NVML_SUCCESS) return v.error;
    if (const nvmlReturn_t rc = number(d, "util_gpu", &utilization->gpu); rc != NVML_SUCCESS) return rc;
    return number(d, "util_memory", &utilization->memory);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* memory) {
    if (const nvmlReturn_t rc = check(d); rc != NVML_SUCCESS) return rc;
    if (const Value& v = value(d, "memory"); v.error != NVML_SUCCESS) return v.error;
    unsigned long long total = 0, used = 0;
    if (const nvmlReturn_t rc = number(d, "memory_total_mib", &total); rc != NVML_SUCCESS) return rc;
    if (const nvmlReturn_t rc = number(d, "memory_used_mib", &used); rc != NVML_SUCCESS) return rc;
    memory->total = total << 20;
    memory->used = used << 20;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned int* kbs) {
    if (counter == NVML_PCIE_UTIL_TX_BYTES) return number(d, "pcie_tx_kbs", kbs);
    if (counter == NVML_PCIE_UTIL_RX_BYTES) return number(d, "pcie_rx_kbs", kbs);
    return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t d, int* pstate) { return number(d, "pstate", pstate); }

#ifdef FAKE_NVML_LEGACY
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long* reasons) {
    return number(d, "clock_events", reasons);
}
#else
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* reasons) {
    return number(d, "clock_events", reasons);
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t* values) {
    if (const nvmlReturn_t rc = check(d); rc != NVML_SUCCESS) return rc;
    if (const Value& v = value(d, "field_values"); v.error != NVML_SUCCESS) return v.error;
    for (int i = 0; i < count; ++i) {
        nvmlFieldValue_t& field = values[i];
        const char* key = field.fieldId == NVML_FI_DEV_POWER_INSTANT   ? "power_instant_mw"
                          : field.fieldId == NVML_FI_DEV_POWER_AVERAGE ? "power_average_mw"
                          : field.fieldId == NVML_FI_DEV_MEMORY_TEMP   ? "memory_temp"
                                                                       : nullptr;
        if (!key) {
            field.nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
            continue;
        }
        const Value& v = value(d, key);
        field.nvmlReturn = v.error;
        if (v.error != NVML_SUCCESS) continue;
        if (field.fieldId == NVML_FI_DEV_MEMORY_TEMP) {
            field.valueType = NVML_VALUE_TYPE_SIGNED_LONG_LONG;
            field.value.sllVal = static_cast<long long>(v.number);
        } else {
            field.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
            field.value.uiVal = static_cast<unsigned int>(v.number);
        }
    }
    return NVML_SUCCESS;
}
#endif

// The scripted CPU list as NVML's words of 64 CPUs; a list of plain numbers and ranges.
nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned int words, unsigned long* set) {
    if (const nvmlReturn_t rc = check(d); rc != NVML_SUCCESS) return rc;
    const Value& v = value(d, "cpu_affinity");
    if (v.error != NVML_SUCCESS) return v.error;
    if (v.text.empty()) return NVML_ERROR_NOT_SUPPORTED;
    for (unsigned int w = 0; w < words; ++w) set[w] = 0;
    constexpr unsigned long kBits = sizeof(unsigned long) * 8;
    const char* p = v.text.c_str();
    while (*p) {
        char* end = nullptr;
        const unsigned long first = std::strtoul(p, &end, 10);
        unsigned long last = first;
        if (*end == '-') last = std::strtoul(end + 1, &end, 10);
        for (unsigned long cpu = first; cpu <= last && cpu / kBits < words; ++cpu) set[cpu / kBits] |= 1UL << (cpu % kBits);
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p) return NVML_ERROR_INVALID_ARGUMENT;
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_t* infos) {
    if (const nvmlReturn_t rc = check(d); rc != NVML_SUCCESS) return rc;
    const Value& v = value(d, "processes");
    if (v.error != NVML_SUCCESS) return v.error;
    std::vector<nvmlProcessInfo_t> list;
    std::size_t pos = 0;
    while (pos < v.text.size()) {
        const std::size_t end = std::min(v.text.find(',', pos), v.text.size());
        const std::string entry = v.text.substr(pos, end - pos);
        pos = end + 1;
        const auto colon = entry.find(':');
        if (colon == std::string::npos) continue;
        const std::string who = entry.substr(0, colon);
        const unsigned long long bytes = std::strtoull(entry.c_str() + colon + 1, nullptr, 10) << 20;
        std::vector<unsigned int> pids;
        if (who == "children") pids = children_of_caller();
        else if (who == "self") pids = {static_cast<unsigned int>(getpid())};
        else pids = {static_cast<unsigned int>(std::strtoul(who.c_str(), nullptr, 10))};
        for (const unsigned int pid : pids) list.push_back({pid, bytes, 0xFFFFFFFFu, 0xFFFFFFFFu});
    }
    if (list.size() > *count) {
        *count = static_cast<unsigned int>(list.size());
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = static_cast<unsigned int>(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) infos[i] = list[i];
    return NVML_SUCCESS;
}

}  // extern "C"
