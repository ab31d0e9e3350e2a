#include "devices/catalog.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "devices/embedded_catalog.hpp"

namespace inferbench::devices {
namespace {

constexpr std::string_view kBuiltinOrigin = "built-in data/devices.yaml";

// Reads one catalog text; every error names origin:line:column of the offending node.
class CatalogReader {
public:
    explicit CatalogReader(std::string origin) : origin_(std::move(origin)) {}

    Catalog read(std::string_view text) {
        YAML::Node root;
        try {
            root = YAML::Load(std::string(text));
        } catch (const YAML::ParserException& e) {
            throw UserError(
                fmt::format("{}:{}:{}: not valid YAML: {}", origin_, e.mark.line + 1, e.mark.column + 1, e.msg));
        }
        if (!root.IsMap()) fail(root, "expected a mapping with version, sources and devices");
        only_keys(root, {"version", "sources", "devices"}, "the catalog");
        const auto version = integer(required(root, "version", "the catalog"), "version");
        if (version != 1)
            fail(root["version"], fmt::format("version {} is not known; this inferbench reads version 1", version));
        Catalog catalog;
        catalog.origin = origin_;
        read_sources(required(root, "sources", "the catalog"), catalog);
        const YAML::Node devices = required(root, "devices", "the catalog");
        if (!devices.IsSequence() || devices.size() == 0) fail(devices, "devices must be a non-empty list");
        for (const auto& node : devices) catalog.devices.push_back(read_device(node, catalog));
        check_unique_matches(devices, catalog);
        return catalog;
    }

private:
    [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const {
        const YAML::Mark mark = node.Mark();
        if (mark.is_null()) throw UserError(fmt::format("{}: {}", origin_, message));
        throw UserError(fmt::format("{}:{}:{}: {}", origin_, mark.line + 1, mark.column + 1, message));
    }

    YAML::Node required(const YAML::Node& map, const char* key, const std::string& where) const {
        const YAML::Node value = map[key];
        if (!value) fail(map, fmt::format("{} has no '{}'", where, key));
        return value;
    }

    void only_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                   const std::string& where) const {
        for (const auto& item : map) {
            const auto key = item.first.as<std::string>();
            if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
            std::vector<std::string> names(allowed.begin(), allowed.end());
            fail(item.first, fmt::format("{}: unknown key '{}'; valid keys: {}", where, key, join(names, ", ")));
        }
    }

    std::string text(const YAML::Node& node, const std::string& what) const {
        if (!node.IsScalar() || trim(node.Scalar()).empty()) fail(node, fmt::format("{} must be non-empty text", what));
        return node.Scalar();
    }

    double number(const YAML::Node& node, const std::string& what) const {
        const auto value = node.IsScalar() ? parse_double(node.Scalar()) : std::nullopt;
        if (!value || *value <= 0) fail(node, fmt::format("{} must be a number > 0", what));
        return *value;
    }

    std::int64_t integer(const YAML::Node& node, const std::string& what) const {
        const auto value = node.IsScalar() ? parse_int(node.Scalar()) : std::nullopt;
        if (!value) fail(node, fmt::format("{} must be a whole number", what));
        return *value;
    }

    bool boolean(const YAML::Node& node, const std::string& what) const {
        if (node.IsScalar() && (node.Scalar() == "true" || node.Scalar() == "false")) return node.Scalar() == "true";
        fail(node, fmt::format("{} must be true or false", what));
    }

    std::string optional_text(const YAML::Node& map, const char* key, const std::string& where) const {
        const YAML::Node value = map[key];
        return value ? text(value, where + " " + key) : std::string();
    }

    std::string source_ref(const YAML::Node& map, const std::string& where, const Catalog& catalog) const {
        const YAML::Node node = required(map, "source", where);
        const std::string id = text(node, where + " source");
        if (!catalog.sources.contains(id)) {
            std::vector<std::string> ids;
            for (const auto& [known, _] : catalog.sources) ids.push_back(known);
            fail(node,
                 fmt::format("{}: source '{}' is not under sources:; known sources: {}", where, id, join(ids, ", ")));
        }
        return id;
    }

    void read_sources(const YAML::Node& node, Catalog& catalog) const {
        if (!node.IsMap() || node.size() == 0) fail(node, "sources must be a mapping of id -> {title, url}");
        for (const auto& item : node) {
            const auto id = item.first.as<std::string>();
            const std::string where = "source '" + id + "'";
            if (!item.second.IsMap()) fail(item.second, where + " must be a mapping with title and url");
            only_keys(item.second, {"title", "url"}, where);
            Source source{id, text(required(item.second, "title", where), where + " title"),
                          text(required(item.second, "url", where), where + " url")};
            catalog.sources.emplace(id, std::move(source));
        }
    }

    Figure figure(const YAML::Node& device, const char* key, const std::string& where, const Catalog& catalog) const {
        const YAML::Node node = required(device, key, where);
        const std::string here = where + " " + key;
        if (!node.IsMap()) fail(node, here + " must be {value: NUMBER, source: ID}");
        only_keys(node, {"value", "source", "derived", "note"}, here);
        Figure f;
        f.value = number(required(node, "value", here), here + " value");
        f.source = source_ref(node, here, catalog);
        f.derived = optional_text(node, "derived", here);
        f.note = optional_text(node, "note", here);
        return f;
    }

    void read_match(const YAML::Node& device, DeviceSpec& spec, const std::string& where,
                    const Catalog& catalog) const {
        const YAML::Node node = required(device, "match", where);
        const std::string here = where + " match";
        if (!node.IsMap()) fail(node, here + " must be {nvml_names: [...], pci_device_ids: [...], source: ID}");
        only_keys(node, {"nvml_names", "pci_device_ids", "source", "note"}, here);
        const YAML::Node names = required(node, "nvml_names", here);
        if (!names.IsSequence() || names.size() == 0)
            fail(names, here + " nvml_names must be a non-empty list of names");
        for (const auto& name : names) spec.nvml_names.push_back(text(name, here + " nvml_names entry"));
        const YAML::Node ids = required(node, "pci_device_ids", here);
        if (!ids.IsSequence()) fail(ids, here + " pci_device_ids must be a list (empty for an integrated GPU)");
        for (const auto& id : ids) spec.pci_device_ids.push_back(pci_id(id, here));
        spec.match_source = source_ref(node, here, catalog);
    }

    std::uint16_t pci_id(const YAML::Node& node, const std::string& where) const {
        const std::string scalar = node.IsScalar() ? std::string(trim(node.Scalar())) : std::string();
        unsigned value = 0;
        const bool hex = scalar.size() > 2 && scalar[0] == '0' && (scalar[1] == 'x' || scalar[1] == 'X');
        const char* begin = scalar.data() + (hex ? 2 : 0);
        const char* end = scalar.data() + scalar.size();
        const auto [ptr, ec] = std::from_chars(begin, end, value, 16);
        if (!hex || ec != std::errc() || ptr != end || value > 0xFFFF)
            fail(node, fmt::format("{}: PCI device id '{}' must be 16-bit hexadecimal, e.g. 0x2335", where, scalar));
        return static_cast<std::uint16_t>(value);
    }

    Peak peak(const YAML::Node& node, Precision precision, const std::string& where, const Catalog& catalog) const {
        const std::string here = fmt::format("{} peak {}", where, precision_name(precision));
        if (!node.IsMap())
            fail(node, here + " must be {dense: N, unit: U, source: ID} or {supported: false, source: ID}");
        Peak p;
        p.precision = precision;
        p.source = source_ref(node, here, catalog);
        p.note = optional_text(node, "note", here);
        if (node["supported"]) {
            only_keys(node, {"supported", "source", "note"}, here + " (unsupported)");
            if (boolean(node["supported"], here + " supported"))
                fail(node["supported"], here + ": write the rate (dense:) instead of supported: true");
            p.supported = false;
            return p;
        }
        if (node["published"]) {
            only_keys(node, {"published", "source", "note"}, here + " (not published)");
            if (boolean(node["published"], here + " published"))
                fail(node["published"], here + ": write the rate (dense:) instead of published: true");
            if (p.note.empty()) fail(node, here + ": say in a note why no figure is given");
            p.published = false;
            return p;
        }
        only_keys(node, {"dense", "sparse", "unit", "units", "source", "derived", "note"}, here);
        p.dense = number(required(node, "dense", here), here + " dense");
        if (node["sparse"]) {
            p.sparse = number(node["sparse"], here + " sparse");
            if (*p.sparse < p.dense) fail(node["sparse"], here + ": the sparse rate cannot be below the dense one");
        }
        const YAML::Node unit = required(node, "unit", here);
        if (text(unit, here + " unit") != rate_unit(precision))
            fail(unit, fmt::format("{}: unit '{}' is wrong; {} rates are in {}", here, unit.Scalar(),
                                   precision_name(precision), rate_unit(precision)));
        if (node["units"]) {
            const std::string units = text(node["units"], here + " units");
            if (units != "CUDA cores" && units != "tensor cores")
                fail(node["units"], here + ": units must be 'CUDA cores' or 'tensor cores'");
            p.cuda_cores = units == "CUDA cores";
        }
        p.derived = optional_text(node, "derived", here);
        return p;
    }

    void read_peaks(const YAML::Node& device, DeviceSpec& spec, const std::string& where,
                    const Catalog& catalog) const {
        const YAML::Node node = required(device, "peaks", where);
        if (!node.IsMap()) fail(node, where + " peaks must be a mapping of precision -> rate");
        for (const auto& item : node) {
            const auto name = item.first.as<std::string>();
            const auto precision = parse_precision(name);
            if (!precision)
                fail(item.first,
                     fmt::format("{}: unknown precision '{}'; valid: fp64, fp32, tf32, fp16, bf16, fp8, int8, int4",
                                 where, name));
            spec.peaks[*precision] = peak(item.second, *precision, where, catalog);
        }
        for (const Precision precision : kPrecisions) {
            if (!spec.peaks.contains(precision))
                fail(node, fmt::format("{} peaks: {} is missing; give its rate, or supported: false / published: false "
                                       "with a source",
                                       where, precision_name(precision)));
        }
    }

    DeviceSpec read_device(const YAML::Node& node, const Catalog& catalog) const {
        if (!node.IsMap()) fail(node, "each device must be a mapping");
        DeviceSpec spec;
        spec.key = text(required(node, "key", "a device"), "key");
        const std::string where = "device '" + spec.key + "'";
        if (spec.key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
            fail(node["key"], where + ": keys are lower-case letters, digits and '-'");
        if (catalog.find(spec.key)) fail(node["key"], where + " is listed twice");
        only_keys(node,
                  {"key", "name", "match", "architecture", "sms", "cuda_cores", "tensor_cores", "boost_clock_mhz",
                   "memory", "memory_bandwidth_gbs", "tdp_w", "peaks"},
                  where);
        spec.name = text(required(node, "name", where), where + " name");
        read_match(node, spec, where, catalog);
        read_architecture(node, spec, where, catalog);
        spec.sms = figure(node, "sms", where, catalog);
        spec.cuda_cores = figure(node, "cuda_cores", where, catalog);
        spec.tensor_cores = figure(node, "tensor_cores", where, catalog);
        spec.boost_clock_mhz = figure(node, "boost_clock_mhz", where, catalog);
        read_memory(node, spec, where, catalog);
        spec.memory_bandwidth_gbs = figure(node, "memory_bandwidth_gbs", where, catalog);
        spec.tdp_w = figure(node, "tdp_w", where, catalog);
        read_peaks(node, spec, where, catalog);
        return spec;
    }

    void read_architecture(const YAML::Node& device, DeviceSpec& spec, const std::string& where,
                           const Catalog& catalog) const {
        const YAML::Node node = required(device, "architecture", where);
        const std::string here = where + " architecture";
        if (!node.IsMap()) fail(node, here + " must be {value: NAME, compute_capability: \"X.Y\", source: ID}");
        only_keys(node, {"value", "compute_capability", "source", "derived", "note"}, here);
        spec.architecture.value = text(required(node, "value", here), here + " value");
        spec.compute_capability = text(required(node, "compute_capability", here), here + " compute_capability");
        spec.architecture.source = source_ref(node, here, catalog);
        spec.architecture.derived = optional_text(node, "derived", here);
        spec.architecture.note = optional_text(node, "note", here);
    }

    void read_memory(const YAML::Node& device, DeviceSpec& spec, const std::string& where,
                     const Catalog& catalog) const {
        const YAML::Node node = required(device, "memory", where);
        const std::string here = where + " memory";
        if (!node.IsMap()) fail(node, here + " must be {size_gb: N, type: TEXT, source: ID}");
        only_keys(node, {"size_gb", "type", "source", "derived", "note"}, here);
        spec.memory_size_gb.value = number(required(node, "size_gb", here), here + " size_gb");
        spec.memory_type = text(required(node, "type", here), here + " type");
        spec.memory_size_gb.source = source_ref(node, here, catalog);
        spec.memory_size_gb.derived = optional_text(node, "derived", here);
        spec.memory_size_gb.note = optional_text(node, "note", here);
    }

    // A PCI id or name that two entries claim would make matching depend on the file's order.
    void check_unique_matches(const YAML::Node& devices, const Catalog& catalog) const {
        std::map<std::uint16_t, std::string> ids;
        std::map<std::string, std::string> names;
        for (std::size_t i = 0; i < catalog.devices.size(); ++i) {
            const auto& spec = catalog.devices[i];
            for (const auto id : spec.pci_device_ids) {
                const auto [it, added] = ids.emplace(id, spec.key);
                if (!added)
                    fail(devices[i], fmt::format("device '{}': PCI device id 0x{:04X} is also listed by '{}'", spec.key,
                                                 id, it->second));
            }
            for (const auto& name : spec.nvml_names) {
                std::string lower = name;
                std::transform(lower.begin(), lower.end(), lower.begin(),
                               [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
                const auto [it, added] = names.emplace(lower, spec.key);
                if (!added)
                    fail(devices[i],
                         fmt::format("device '{}': name '{}' is also listed by '{}'", spec.key, name, it->second));
            }
        }
    }

    std::string origin_;
};

}  // namespace

std::string_view precision_name(Precision precision) {
    switch (precision) {
        case Precision::fp64:
            return "fp64";
        case Precision::fp32:
            return "fp32";
        case Precision::tf32:
            return "tf32";
        case Precision::fp16:
            return "fp16";
        case Precision::bf16:
            return "bf16";
        case Precision::fp8:
            return "fp8";
        case Precision::int8:
            return "int8";
        case Precision::int4:
            return "int4";
    }
    return "?";
}

std::optional<Precision> parse_precision(std::string_view name) {
    for (const Precision precision : kPrecisions) {
        if (precision_name(precision) == name) return precision;
    }
    return std::nullopt;
}

bool is_integer(Precision precision) { return precision == Precision::int8 || precision == Precision::int4; }

std::string_view rate_unit(Precision precision) { return is_integer(precision) ? "TOPS" : "TFLOP/s"; }

const Peak* DeviceSpec::peak(Precision precision) const {
    const auto it = peaks.find(precision);
    return it == peaks.end() ? nullptr : &it->second;
}

const DeviceSpec* Catalog::find(std::string_view key) const {
    for (const auto& device : devices) {
        if (device.key == key) return &device;
    }
    return nullptr;
}

const Source* Catalog::source(std::string_view id) const {
    const auto it = sources.find(std::string(id));
    return it == sources.end() ? nullptr : &it->second;
}

Catalog parse_catalog(std::string_view yaml_text, const std::string& origin) {
    return CatalogReader(origin).read(yaml_text);
}

std::string_view builtin_catalog_text() { return embedded::devices_yaml(); }

Catalog load_catalog() {
    const char* override_path = std::getenv("INFERBENCH_DEVICES_FILE");
    if (!override_path || !*override_path) return parse_catalog(builtin_catalog_text(), std::string(kBuiltinOrigin));
    std::ifstream in(override_path);
    if (!in)
        throw UserError(
            fmt::format("INFERBENCH_DEVICES_FILE={}: cannot read it; point it at a device catalog "
                        "(see data/devices.yaml) or unset it",
                        override_path));
    std::stringstream content;
    content << in.rdbuf();
    return parse_catalog(content.str(), override_path);
}

}  // namespace inferbench::devices
