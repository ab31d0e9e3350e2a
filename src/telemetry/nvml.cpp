#include "telemetry/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <mutex>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/cpu_list.hpp"
#include "core/error.hpp"
#include "telemetry/nvml_api.hpp"

namespace inferbench::telemetry {

using namespace nvml_api;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

enum Metric : std::size_t {
    kPowerInstant,
    kPowerAverage,
    kMemoryTemperature,
    kPowerUsage,
    kEnergy,
    kPowerLimit,
    kTemperature,
    kClockSm,
    kClockMemory,
    kClockGraphics,
    kUtilization,
    kMemoryInfo,
    kPcieTx,
    kPcieRx,
    kPstate,
    kClockEvents,
    kProcesses,
    kMetricCount
};

constexpr std::array<const char*, kMetricCount> kMetricNames = {
    "instant power", "average power", "memory temperature", "power",      "energy counter", "power limit",
    "temperature",   "SM clock",      "memory clock",       "graphics clock", "utilisation", "memory use",
    "PCIe TX",       "PCIe RX",       "P-state",            "clock-event reasons", "process memory"};

// Errors after which asking again is pointless.
bool is_permanent(nvmlReturn_t rc) {
    return rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_NO_PERMISSION || rc == NVML_ERROR_FUNCTION_NOT_FOUND ||
           rc == NVML_ERROR_INVALID_ARGUMENT;
}

std::optional<double> field_number(const nvmlFieldValue_t& field) {
    const nvmlValue_t& v = field.value;
    switch (field.valueType) {
        case NVML_VALUE_TYPE_DOUBLE: return v.dVal;
        case NVML_VALUE_TYPE_UNSIGNED_INT: return static_cast<double>(v.uiVal);
        case NVML_VALUE_TYPE_UNSIGNED_LONG: return static_cast<double>(v.ulVal);
        case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return static_cast<double>(v.ullVal);
        case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return static_cast<double>(v.sllVal);
        case NVML_VALUE_TYPE_SIGNED_INT: return static_cast<double>(v.siVal);
        case NVML_VALUE_TYPE_UNSIGNED_SHORT: return static_cast<double>(v.usVal);
        default: return std::nullopt;
    }
}

std::int64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

template <typename Fn>
Fn symbol(void* handle, const char* name) {
    return reinterpret_cast<Fn>(dlsym(handle, name));
}

}  // namespace

std::string nvml_library_path() {
    if (const char* path = std::getenv("INFERBENCH_NVML_LIBRARY"); path && *path) return path;
    return "libnvidia-ml.so.1";
}

struct Nvml::Impl {
    struct Device {
        nvmlDevice_t handle = nullptr;
        // One flag per metric, each written by one thread only (PCIe by the PCIe thread): no lock needed.
        std::array<bool, kMetricCount> off{};
        std::array<bool, kMetricCount> noted{};
        std::vector<nvmlProcessInfo_t> processes = std::vector<nvmlProcessInfo_t>(32);
    };

    std::string library;
    void* handle = nullptr;
    std::string driver_version;
    std::vector<Device> devices;
    struct Cost {
        std::atomic<std::int64_t> calls{0}, cpu_ns{0}, wall_ns{0};
    };
    std::atomic<bool> profiling{false};
    std::array<Cost, kMetricCount> costs;
    mutable std::mutex notes_mutex;
    std::vector<std::string> notes;

    InitFn init = nullptr;
    ShutdownFn shutdown = nullptr;
    ErrorStringFn error_string = nullptr;
    SystemGetDriverVersionFn get_driver_version = nullptr;
    DeviceGetCountFn get_count = nullptr;
    DeviceGetHandleByIndexFn get_handle = nullptr;
    DeviceGetTextFn get_name = nullptr;
    DeviceGetTextFn get_uuid = nullptr;
    DeviceGetPciInfoFn get_pci = nullptr;
    DeviceGetUintFn get_power_usage = nullptr;
    DeviceGetUintFn get_power_limit = nullptr;
    DeviceGetUllFn get_energy = nullptr;
    DeviceGetUintOfFn get_temperature = nullptr;
    DeviceGetUintOfFn get_clock = nullptr;
    DeviceGetUintOfFn get_default_applications_clock = nullptr;
    DeviceGetUintOfFn get_pcie = nullptr;
    DeviceGetIntFn get_pstate = nullptr;
    DeviceGetUtilizationFn get_utilization = nullptr;
    DeviceGetMemoryFn get_memory = nullptr;
    DeviceGetUllFn get_clock_events = nullptr;
    DeviceGetProcessesFn get_processes = nullptr;
    DeviceGetFieldValuesFn get_field_values = nullptr;
    DeviceGetCpuAffinityFn get_cpu_affinity = nullptr;

    ~Impl() {
        if (shutdown) shutdown();
        if (handle) dlclose(handle);
    }

    std::string error_text(nvmlReturn_t rc) const {
        if (rc == NVML_ERROR_FUNCTION_NOT_FOUND) return "not in this driver's NVML";
        const char* text = error_string ? error_string(rc) : nullptr;
        return text && *text ? std::string(text) : fmt::format("NVML error {}", rc);
    }

    void resolve() {
        get_driver_version = symbol<SystemGetDriverVersionFn>(handle, "nvmlSystemGetDriverVersion");
        get_name = symbol<DeviceGetTextFn>(handle, "nvmlDeviceGetName");
        get_uuid = symbol<DeviceGetTextFn>(handle, "nvmlDeviceGetUUID");
        get_pci = symbol<DeviceGetPciInfoFn>(handle, "nvmlDeviceGetPciInfo_v3");
        get_power_usage = symbol<DeviceGetUintFn>(handle, "nvmlDeviceGetPowerUsage");
        get_power_limit = symbol<DeviceGetUintFn>(handle, "nvmlDeviceGetEnforcedPowerLimit");
        get_energy = symbol<DeviceGetUllFn>(handle, "nvmlDeviceGetTotalEnergyConsumption");
        get_temperature = symbol<DeviceGetUintOfFn>(handle, "nvmlDeviceGetTemperature");
        get_clock = symbol<DeviceGetUintOfFn>(handle, "nvmlDeviceGetClockInfo");
        get_default_applications_clock = symbol<DeviceGetUintOfFn>(handle, "nvmlDeviceGetDefaultApplicationsClock");
        get_pcie = symbol<DeviceGetUintOfFn>(handle, "nvmlDeviceGetPcieThroughput");
        get_pstate = symbol<DeviceGetIntFn>(handle, "nvmlDeviceGetPerformanceState");
        get_utilization = symbol<DeviceGetUtilizationFn>(handle, "nvmlDeviceGetUtilizationRates");
        get_memory = symbol<DeviceGetMemoryFn>(handle, "nvmlDeviceGetMemoryInfo");
        // Renamed in CUDA 12.2 drivers; the older name stays for older drivers.
        get_clock_events = symbol<DeviceGetUllFn>(handle, "nvmlDeviceGetCurrentClocksEventReasons");
        if (!get_clock_events) get_clock_events = symbol<DeviceGetUllFn>(handle, "nvmlDeviceGetCurrentClocksThrottleReasons");
        get_processes = symbol<DeviceGetProcessesFn>(handle, "nvmlDeviceGetComputeRunningProcesses_v3");
        get_field_values = symbol<DeviceGetFieldValuesFn>(handle, "nvmlDeviceGetFieldValues");
        get_cpu_affinity = symbol<DeviceGetCpuAffinityFn>(handle, "nvmlDeviceGetCpuAffinity");
    }

    void note(Device& device, int index, Metric metric, nvmlReturn_t rc) {
        const bool permanent = is_permanent(rc);
        if (permanent) device.off[metric] = true;
        if (device.noted[metric]) return;
        device.noted[metric] = true;
        const std::lock_guard lock(notes_mutex);
        notes.push_back(fmt::format("GPU {} {}: {}{}", index, kMetricNames[metric], error_text(rc),
                                    permanent ? "" : " (asked again each sample)"));
    }

    // `call()`, its cost added to `metric` when profiling.
    template <typename Call>
    nvmlReturn_t timed(Metric metric, Call&& call) {
        if (!profiling.load(std::memory_order_relaxed)) return call();
        const std::int64_t cpu0 = thread_cpu_ns(), wall0 = monotonic_ns();
        const nvmlReturn_t rc = call();
        Cost& cost = costs[metric];
        cost.calls.fetch_add(1, std::memory_order_relaxed);
        cost.cpu_ns.fetch_add(thread_cpu_ns() - cpu0, std::memory_order_relaxed);
        cost.wall_ns.fetch_add(monotonic_ns() - wall0, std::memory_order_relaxed);
        return rc;
    }

    // Runs one query unless the metric is off; true on success, else the failure is noted.
    template <typename Call>
    bool query(Device& device, int index, Metric metric, Call&& call) {
        if (device.off[metric]) return false;
        const nvmlReturn_t rc = timed(metric, call);
        if (rc == NVML_SUCCESS) return true;
        note(device, index, metric, rc);
        return false;
    }

    template <typename Fn, typename... Args>
    nvmlReturn_t call(Fn fn, Args... args) const {
        return fn ? fn(args...) : NVML_ERROR_FUNCTION_NOT_FOUND;
    }

    void read_fields(Device& d, int index, GpuSample& sample, bool slow);
    void read_processes(Device& d, int index, GpuSample& sample, std::span<const int> pids);
};

void Nvml::Impl::read_fields(Device& d, int index, GpuSample& sample, bool slow) {
    static constexpr std::array<std::pair<Metric, unsigned>, 3> kFields = {
        {{kPowerInstant, NVML_FI_DEV_POWER_INSTANT},
         {kPowerAverage, NVML_FI_DEV_POWER_AVERAGE},
         {kMemoryTemperature, NVML_FI_DEV_MEMORY_TEMP}}};
    std::array<nvmlFieldValue_t, kFields.size()> values{};
    std::array<Metric, kFields.size()> asked{};
    int count = 0;
    for (const auto& [metric, id] : kFields) {
        if (d.off[metric] || (metric != kPowerInstant && !slow)) continue;  // a 1 s average and a temperature
        values[static_cast<std::size_t>(count)].fieldId = id;
        asked[static_cast<std::size_t>(count++)] = metric;
    }
    if (count == 0) return;
    if (const nvmlReturn_t rc = timed(kPowerInstant, [&] { return call(get_field_values, d.handle, count, values.data()); });
        rc != NVML_SUCCESS) {
        for (int i = 0; i < count; ++i) note(d, index, asked[static_cast<std::size_t>(i)], rc);
        return;
    }
    for (int i = 0; i < count; ++i) {
        const auto& field = values[static_cast<std::size_t>(i)];
        const Metric metric = asked[static_cast<std::size_t>(i)];
        const auto number = field.nvmlReturn == NVML_SUCCESS ? field_number(field) : std::nullopt;
        if (!number) {
            note(d, index, metric, field.nvmlReturn == NVML_SUCCESS ? NVML_ERROR_UNKNOWN : field.nvmlReturn);
            continue;
        }
        if (metric == kPowerInstant) sample.power_w = *number / 1000.0;
        else if (metric == kPowerAverage) sample.power_avg_w = *number / 1000.0;
        else sample.memory_temperature_c = *number;
    }
}

void Nvml::Impl::read_processes(Device& d, int index, GpuSample& sample, std::span<const int> pids) {
    unsigned int count = 0;
    const auto list = [&] {
        count = static_cast<unsigned int>(d.processes.size());
        return timed(kProcesses, [&] { return call(get_processes, d.handle, &count, d.processes.data()); });
    };
    nvmlReturn_t rc = list();
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {  // more processes than room: grow once and ask again
        d.processes.resize(std::max<std::size_t>(count, d.processes.size()) * 2);
        rc = list();
    }
    if (rc != NVML_SUCCESS) {
        note(d, index, kProcesses, rc);
        return;
    }
    std::optional<double> bytes;
    for (unsigned int i = 0; i < count && i < d.processes.size(); ++i) {
        const auto& process = d.processes[i];
        if (std::find(pids.begin(), pids.end(), static_cast<int>(process.pid)) == pids.end()) continue;
        if (process.usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL) continue;
        bytes = bytes.value_or(0.0) + static_cast<double>(process.usedGpuMemory);
    }
    if (bytes) sample.process_fb_mib = *bytes / kMiB;
}

Nvml::Nvml(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Nvml::~Nvml() = default;

std::unique_ptr<Nvml> Nvml::open(const std::string& library) {
    auto impl = std::make_unique<Impl>();
    impl->library = library;
    dlerror();
    impl->handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!impl->handle) {
        const char* why = dlerror();
        throw EnvironmentError(why ? why : library + ": cannot be loaded");
    }
    const auto init = symbol<InitFn>(impl->handle, "nvmlInit_v2");
    const auto shutdown = symbol<ShutdownFn>(impl->handle, "nvmlShutdown");
    impl->error_string = symbol<ErrorStringFn>(impl->handle, "nvmlErrorString");
    impl->get_count = symbol<DeviceGetCountFn>(impl->handle, "nvmlDeviceGetCount_v2");
    impl->get_handle = symbol<DeviceGetHandleByIndexFn>(impl->handle, "nvmlDeviceGetHandleByIndex_v2");
    if (!init || !shutdown || !impl->get_count || !impl->get_handle)
        throw EnvironmentError(fmt::format("{}: not an NVML library (nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2 "
                                           "or nvmlDeviceGetHandleByIndex_v2 missing)", library));
    if (const nvmlReturn_t rc = init(); rc != NVML_SUCCESS)
        throw EnvironmentError(fmt::format("nvmlInit_v2: {}", impl->error_text(rc)));
    impl->shutdown = shutdown;  // from here on, the destructor shuts NVML down
    impl->resolve();
    std::array<char, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE> version{};
    if (impl->call(impl->get_driver_version, version.data(), static_cast<unsigned>(version.size())) == NVML_SUCCESS)
        impl->driver_version = version.data();
    unsigned int count = 0;
    if (const nvmlReturn_t rc = impl->get_count(&count); rc != NVML_SUCCESS)
        throw EnvironmentError(fmt::format("nvmlDeviceGetCount_v2: {}", impl->error_text(rc)));
    impl->devices.resize(count);
    for (unsigned int i = 0; i < count; ++i) {
        auto& device = impl->devices[i];
        if (const nvmlReturn_t rc = impl->get_handle(i, &device.handle); rc != NVML_SUCCESS) {
            device.handle = nullptr;
            device.off.fill(true);
            impl->notes.push_back(fmt::format("GPU {}: cannot be opened: {}", i, impl->error_text(rc)));
        }
    }
    return std::unique_ptr<Nvml>(new Nvml(std::move(impl)));
}

const std::string& Nvml::library() const { return impl_->library; }
int Nvml::device_count() const { return static_cast<int>(impl_->devices.size()); }
const std::string& Nvml::driver_version() const { return impl_->driver_version; }

std::vector<std::string> Nvml::notes() const {
    const std::lock_guard lock(impl_->notes_mutex);
    return impl_->notes;
}

GpuIdentity Nvml::identity(int index) const {
    Impl& nvml = *impl_;
    GpuIdentity id;
    id.index = index;
    id.driver_version = nvml.driver_version;
    const nvmlDevice_t handle = nvml.devices.at(static_cast<std::size_t>(index)).handle;
    if (!handle) return id;
    std::array<char, NVML_DEVICE_NAME_V2_BUFFER_SIZE> text{};
    if (nvml.call(nvml.get_name, handle, text.data(), static_cast<unsigned>(text.size())) == NVML_SUCCESS) id.name = text.data();
    text.fill('\0');
    if (nvml.call(nvml.get_uuid, handle, text.data(), static_cast<unsigned>(text.size())) == NVML_SUCCESS) id.uuid = text.data();
    nvmlPciInfo_t pci{};
    if (nvml.call(nvml.get_pci, handle, &pci) == NVML_SUCCESS) {
        pci.busId[sizeof(pci.busId) - 1] = '\0';
        id.pci_bus_id = pci.busId;
        id.pci_device_id = pci.pciDeviceId;
    }
    nvmlMemory_t memory{};
    if (nvml.call(nvml.get_memory, handle, &memory) == NVML_SUCCESS)
        id.memory_total_mib = static_cast<double>(memory.total) / kMiB;
    // The SM clock is what samples read; where a driver answers only for graphics, that one (the same
    // clock domain on every data-centre GPU).
    unsigned int mhz = 0;
    for (const int clock : {NVML_CLOCK_SM, NVML_CLOCK_GRAPHICS}) {
        if (nvml.call(nvml.get_default_applications_clock, handle, clock, &mhz) != NVML_SUCCESS || mhz == 0) continue;
        id.default_applications_clock_mhz = mhz;
        break;
    }
    return id;
}

void Nvml::read(int index, GpuSample& s, std::span<const int> pids, const NvmlReadSet& set) {
    Impl& nvml = *impl_;
    auto& d = nvml.devices.at(static_cast<std::size_t>(index));
    const nvmlDevice_t h = d.handle;
    unsigned int u = 0;
    unsigned long long ull = 0;
    nvml.read_fields(d, index, s, set.slow);
    // nvmlDeviceGetPowerUsage is the 1 s average on Ampere and newer, instant power before: the
    // fallback for a driver without the POWER_INSTANT field.
    if (!s.power_w && d.off[kPowerInstant] && nvml.query(d, index, kPowerUsage, [&] { return nvml.call(nvml.get_power_usage, h, &u); }))
        s.power_w = u / 1000.0;
    if (set.energy && nvml.query(d, index, kEnergy, [&] { return nvml.call(nvml.get_energy, h, &ull); }))
        s.energy_mj = static_cast<double>(ull);
    if (nvml.query(d, index, kClockSm, [&] { return nvml.call(nvml.get_clock, h, NVML_CLOCK_SM, &u); })) s.sm_clock_mhz = u;
    if (nvml.query(d, index, kClockEvents, [&] { return nvml.call(nvml.get_clock_events, h, &ull); }))
        s.clock_event_reasons = static_cast<std::uint64_t>(ull);
    if (set.occasional) {
        if (nvml.query(d, index, kPowerLimit, [&] { return nvml.call(nvml.get_power_limit, h, &u); })) s.power_limit_w = u / 1000.0;
        nvmlMemory_t memory{};
        if (nvml.query(d, index, kMemoryInfo, [&] { return nvml.call(nvml.get_memory, h, &memory); })) {
            s.fb_used_mib = static_cast<double>(memory.used) / kMiB;
            s.fb_total_mib = static_cast<double>(memory.total) / kMiB;
        }
        if (!d.off[kProcesses]) nvml.read_processes(d, index, s, pids);
    }
    if (!set.slow) return;
    // The driver updates utilisation every 1/6 s to 1 s (by product).
    nvmlUtilization_t utilization{};
    if (nvml.query(d, index, kUtilization, [&] { return nvml.call(nvml.get_utilization, h, &utilization); })) {
        s.gpu_util_pct = utilization.gpu;
        s.memory_util_pct = utilization.memory;
    }
    if (nvml.query(d, index, kTemperature, [&] { return nvml.call(nvml.get_temperature, h, NVML_TEMPERATURE_GPU, &u); }))
        s.temperature_c = u;
    if (nvml.query(d, index, kClockMemory, [&] { return nvml.call(nvml.get_clock, h, NVML_CLOCK_MEM, &u); }))
        s.memory_clock_mhz = u;
    if (nvml.query(d, index, kClockGraphics, [&] { return nvml.call(nvml.get_clock, h, NVML_CLOCK_GRAPHICS, &u); }))
        s.graphics_clock_mhz = u;
    int pstate = NVML_PSTATE_UNKNOWN;
    if (nvml.query(d, index, kPstate, [&] { return nvml.call(nvml.get_pstate, h, &pstate); }) && pstate >= 0 && pstate <= 15)
        s.pstate = pstate;
}

std::vector<int> Nvml::cpu_affinity(int index, std::string& why) const {
    Impl& nvml = *impl_;
    const nvmlDevice_t handle = nvml.devices.at(static_cast<std::size_t>(index)).handle;
    constexpr unsigned kWordBits = sizeof(unsigned long) * 8;
    std::array<unsigned long, kMaxCpus / kWordBits> words{};
    std::vector<int> cpus;
    const nvmlReturn_t rc =
        handle ? nvml.call(nvml.get_cpu_affinity, handle, static_cast<unsigned>(words.size()), words.data())
               : NVML_ERROR_INVALID_ARGUMENT;
    if (rc != NVML_SUCCESS) {
        why = fmt::format("nvmlDeviceGetCpuAffinity of GPU {}: {}", index, nvml.error_text(rc));
        return cpus;
    }
    for (unsigned cpu = 0; cpu < static_cast<unsigned>(kMaxCpus); ++cpu)
        if ((words[cpu / kWordBits] >> (cpu % kWordBits)) & 1UL) cpus.push_back(static_cast<int>(cpu));
    if (cpus.empty()) why = fmt::format("nvmlDeviceGetCpuAffinity of GPU {}: no CPU named", index);
    return cpus;
}

PcieThroughput Nvml::read_pcie(int index) {
    Impl& nvml = *impl_;
    auto& d = nvml.devices.at(static_cast<std::size_t>(index));
    PcieThroughput result;
    unsigned int kib = 0;
    if (nvml.query(d, index, kPcieTx, [&] { return nvml.call(nvml.get_pcie, d.handle, NVML_PCIE_UTIL_TX_BYTES, &kib); }))
        result.tx_kib_s = kib;
    if (nvml.query(d, index, kPcieRx, [&] { return nvml.call(nvml.get_pcie, d.handle, NVML_PCIE_UTIL_RX_BYTES, &kib); }))
        result.rx_kib_s = kib;
    return result;
}

void Nvml::set_profiling(bool on) { impl_->profiling.store(on, std::memory_order_relaxed); }

std::vector<NvmlCallCost> Nvml::call_costs() const {
    std::vector<NvmlCallCost> result;
    for (std::size_t m = 0; m < kMetricCount; ++m) {
        const auto& cost = impl_->costs[m];
        const std::int64_t calls = cost.calls.load(std::memory_order_relaxed);
        if (calls == 0) continue;
        result.push_back({m == kPowerInstant ? "field values" : kMetricNames[m], calls,
                          cost.cpu_ns.load(std::memory_order_relaxed), cost.wall_ns.load(std::memory_order_relaxed)});
    }
    return result;
}

bool Nvml::pcie_supported(int index) const {
    const auto& d = impl_->devices.at(static_cast<std::size_t>(index));
    return !(d.off[kPcieTx] && d.off[kPcieRx]);
}

}  // namespace inferbench::telemetry
