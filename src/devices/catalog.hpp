// The device catalog: datasheet figures of GPUs (data/devices.yaml, embedded at build time, replaced by
// $INFERBENCH_DEVICES_FILE), every figure with its source. Loading validates everything and reports the
// first problem as "FILE:LINE:COL: what is wrong; how to fix it" (UserError).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench::devices {

// The precisions a datasheet quotes peaks for, in catalog order.
enum class Precision { fp64, fp32, tf32, fp16, bf16, fp8, int8, int4 };
inline constexpr std::array<Precision, 8> kPrecisions = {Precision::fp64, Precision::fp32, Precision::tf32,
                                                         Precision::fp16, Precision::bf16, Precision::fp8,
                                                         Precision::int8, Precision::int4};

std::string_view precision_name(Precision precision);  // "fp16"
std::optional<Precision> parse_precision(std::string_view name);
bool is_integer(Precision precision);
// The unit of a peak rate: "TOPS" (10^12 integer operations/s) for integers, else "TFLOP/s".
std::string_view rate_unit(Precision precision);

struct Source {
    std::string id;
    std::string title;
    std::string url;
};

// A number from a datasheet (or computed from datasheet numbers: `derived` says how).
struct Figure {
    double value = 0;
    std::string source;   // a Source id
    std::string derived;  // empty when quoted as it is
    std::string note;
};

struct TextFigure {
    std::string value;
    std::string source;
    std::string derived;
    std::string note;
};

// A peak rate in the precision's unit (TFLOP/s or TOPS).
struct Peak {
    Precision precision = Precision::fp32;
    bool supported = true;         // false: the device cannot run this precision
    bool published = true;         // false: supported, but no figure is known (see note)
    double dense = 0;              // valid when supported && published
    std::optional<double> sparse;  // where the vendor quotes a 2:4 structured-sparsity rate
    bool cuda_cores = false;       // false: tensor cores
    std::string source, derived, note;

    bool has_rate() const { return supported && published; }
};

struct DeviceSpec {
    std::string key;           // "h200-sxm"
    std::string name;          // "NVIDIA H200 SXM 141GB"
    std::string kind = "gpu";  // "gpu", or "cpu" for the entry computed at run time
    bool estimated = false;    // computed at run time, not from a datasheet
    std::vector<std::string> nvml_names;
    std::vector<std::uint16_t> pci_device_ids;
    std::string match_source;
    TextFigure architecture;
    std::string compute_capability;
    Figure sms, cuda_cores, tensor_cores, boost_clock_mhz;
    Figure memory_size_gb;
    std::string memory_type;
    std::optional<Figure> memory_bandwidth_gbs;  // always set in the catalog; unknown for a computed CPU entry
    std::optional<Figure> tdp_w;
    std::map<Precision, Peak> peaks;  // catalog entries have all eight

    const Peak* peak(Precision precision) const;
};

struct Catalog {
    std::string origin;  // where it was read: a path, or "built-in data/devices.yaml"
    std::map<std::string, Source> sources;
    std::vector<DeviceSpec> devices;

    const DeviceSpec* find(std::string_view key) const;
    const Source* source(std::string_view id) const;
};

// Parses and validates catalog text; `origin` names it in error messages.
Catalog parse_catalog(std::string_view yaml_text, const std::string& origin);

// $INFERBENCH_DEVICES_FILE when set (a missing or bad file is a UserError), else the built-in catalog.
Catalog load_catalog();

// The catalog text built into this binary.
std::string_view builtin_catalog_text();

}  // namespace inferbench::devices
