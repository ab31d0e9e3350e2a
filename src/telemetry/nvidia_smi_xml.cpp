// nvidia-smi -q -x: one <nvidia_smi_log> document, or several concatenated (a loop of -q -x calls).
// A small element reader is enough for this format (elements, text, attributes skipped, entities,
// comments, CDATA, <?xml?> and <!DOCTYPE>); no DTD is fetched or applied.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "telemetry/nvidia_smi_detail.hpp"

namespace inferbench::telemetry::detail {
namespace {

struct XmlElement {
    std::string name;
    std::string text;  // character data directly inside, entities decoded, trimmed
    std::size_t line = 0;
    std::vector<XmlElement> children;

    const XmlElement* child(std::string_view child_name) const {
        for (const auto& c : children)
            if (c.name == child_name) return &c;
        return nullptr;
    }
    // "gpu_power_readings/instant_power_draw"
    const XmlElement* find(std::string_view path) const {
        const XmlElement* element = this;
        while (element && !path.empty()) {
            const std::size_t slash = path.find('/');
            element = element->child(path.substr(0, slash));
            path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
        }
        return element;
    }
};

struct XmlDocuments {
    std::vector<XmlElement> roots;  // every top-level element read completely
    std::string error;              // why reading stopped early; empty when the text was read to its end
    std::size_t error_line = 0;
};

std::string decode_entities(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    while (!text.empty()) {
        const std::size_t amp = text.find('&');
        out += text.substr(0, amp);
        if (amp == std::string_view::npos) break;
        text.remove_prefix(amp);
        const std::size_t semicolon = text.find(';');
        const std::string_view entity = text.substr(1, semicolon == std::string_view::npos ? 0 : semicolon - 1);
        static constexpr std::array<std::pair<std::string_view, char>, 5> kNamed = {
            {{"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}}};
        const auto named = std::find_if(kNamed.begin(), kNamed.end(), [&](const auto& e) { return e.first == entity; });
        std::optional<std::int64_t> code;
        if (entity.size() > 2 && entity[0] == '#' && (entity[1] == 'x' || entity[1] == 'X')) {
            std::int64_t value = 0;
            const auto [end, ec] = std::from_chars(entity.data() + 2, entity.data() + entity.size(), value, 16);
            if (ec == std::errc() && end == entity.data() + entity.size()) code = value;
        } else if (entity.size() > 1 && entity[0] == '#') {
            code = parse_int(entity.substr(1));
        }
        if (named != kNamed.end()) {
            out += named->second;
        } else if (code && *code > 0 && *code < 128) {
            out += static_cast<char>(*code);
        } else {
            out += '&';  // not an entity this format uses: kept as written
            text.remove_prefix(1);
            continue;
        }
        text.remove_prefix(semicolon + 1);
    }
    return out;
}

class XmlReader {
public:
    explicit XmlReader(std::string_view text) : text_(text) {}

    XmlDocuments read() {
        XmlDocuments documents;
        std::vector<XmlElement> open;
        while (pos_ < text_.size()) {
            if (!step(open, documents.roots)) {
                documents.error = error_;
                documents.error_line = line_;
                return documents;
            }
        }
        if (!open.empty()) {
            documents.error =
                fmt::format("the XML ends inside <{}> opened at line {}", open.back().name, open.back().line);
            documents.error_line = line_;
        }
        return documents;
    }

private:
    bool fail(std::string message) {
        error_ = std::move(message);
        return false;
    }

    void advance(std::size_t count) {
        count = std::min(count, text_.size() - pos_);
        line_ += static_cast<std::size_t>(std::count(text_.begin() + static_cast<std::ptrdiff_t>(pos_),
                                                     text_.begin() + static_cast<std::ptrdiff_t>(pos_ + count), '\n'));
        pos_ += count;
    }

    bool at(std::string_view prefix) const { return text_.substr(pos_).starts_with(prefix); }

    // Skips past `terminator`; false when it never comes.
    bool skip_past(std::string_view terminator, std::string_view what) {
        const std::size_t end = text_.find(terminator, pos_);
        if (end == std::string_view::npos) return fail(fmt::format("unterminated {}", what));
        advance(end + terminator.size() - pos_);
        return true;
    }

    bool skip_doctype() {
        int brackets = 0;
        for (std::size_t i = pos_; i < text_.size(); ++i) {
            if (text_[i] == '[') ++brackets;
            if (text_[i] == ']') --brackets;
            if (text_[i] == '>' && brackets <= 0) {
                advance(i + 1 - pos_);
                return true;
            }
        }
        return fail("unterminated <!DOCTYPE");
    }

    static void attach(XmlElement element, std::vector<XmlElement>& open, std::vector<XmlElement>& roots) {
        element.text = std::string(trim(element.text));
        if (open.empty())
            roots.push_back(std::move(element));
        else
            open.back().children.push_back(std::move(element));
    }

    bool step(std::vector<XmlElement>& open, std::vector<XmlElement>& roots) {
        if (text_[pos_] != '<') {
            const std::size_t end = std::min(text_.find('<', pos_), text_.size());
            const std::string_view chars = text_.substr(pos_, end - pos_);
            if (open.empty() && !trim(chars).empty()) return fail("text outside any element");
            if (!open.empty()) open.back().text += decode_entities(chars);
            advance(end - pos_);
            return true;
        }
        if (at("<?")) return skip_past("?>", "<? processing instruction");
        if (at("<!--")) return skip_past("-->", "<!-- comment");
        if (at("<![CDATA[")) {
            const std::size_t end = text_.find("]]>", pos_);
            if (end == std::string_view::npos || open.empty()) return fail("unterminated or misplaced <![CDATA[");
            open.back().text += text_.substr(pos_ + 9, end - pos_ - 9);
            advance(end + 3 - pos_);
            return true;
        }
        if (at("<!")) return skip_doctype();
        if (at("</")) return close_tag(open, roots);
        return open_tag(open, roots);
    }

    bool close_tag(std::vector<XmlElement>& open, std::vector<XmlElement>& roots) {
        const std::size_t end = text_.find('>', pos_);
        if (end == std::string_view::npos) return fail("unterminated closing tag");
        const std::string_view name = trim(text_.substr(pos_ + 2, end - pos_ - 2));
        if (open.empty()) return fail(fmt::format("</{}> closes no open element", name));
        if (open.back().name != name)
            return fail(fmt::format("</{}> closes <{}> opened at line {}", name, open.back().name, open.back().line));
        XmlElement element = std::move(open.back());
        open.pop_back();
        attach(std::move(element), open, roots);
        advance(end + 1 - pos_);
        return true;
    }

    bool open_tag(std::vector<XmlElement>& open, std::vector<XmlElement>& roots) {
        std::size_t i = pos_ + 1;
        while (i < text_.size() && text_[i] != '>' && text_[i] != '/' &&
               std::isspace(static_cast<unsigned char>(text_[i])) == 0)
            ++i;
        XmlElement element;
        element.name = std::string(text_.substr(pos_ + 1, i - pos_ - 1));
        element.line = line_;
        if (element.name.empty()) return fail("'<' that opens no element");
        char quote = 0;  // attribute values may hold '>' and '/'
        for (; i < text_.size(); ++i) {
            const char c = text_[i];
            if (quote != 0) {
                if (c == quote) quote = 0;
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '>') {
                break;
            }
        }
        if (i >= text_.size()) return fail(fmt::format("unterminated tag <{}", element.name));
        const bool self_closing = text_[i - 1] == '/';
        advance(i + 1 - pos_);
        if (self_closing)
            attach(std::move(element), open, roots);
        else
            open.push_back(std::move(element));
        return true;
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    std::size_t line_ = 1;
    std::string error_;
};

const std::array<Mapping, 14> kMappings = {{
    {&GpuSample::power_w,
     "W",
     {"gpu_power_readings/instant_power_draw", "power_readings/instant_power_draw", "gpu_power_readings/power_draw",
      "power_readings/power_draw"}},
    {&GpuSample::power_avg_w, "W", {"gpu_power_readings/average_power_draw", "power_readings/average_power_draw"}},
    {&GpuSample::power_limit_w,
     "W",
     {"gpu_power_readings/current_power_limit", "power_readings/current_power_limit",
      "power_readings/enforced_power_limit", "gpu_power_readings/enforced_power_limit"}},
    {&GpuSample::temperature_c, "C", {"temperature/gpu_temp"}},
    {&GpuSample::memory_temperature_c, "C", {"temperature/memory_temp"}},
    {&GpuSample::sm_clock_mhz, "MHz", {"clocks/sm_clock"}},
    {&GpuSample::memory_clock_mhz, "MHz", {"clocks/mem_clock"}},
    {&GpuSample::graphics_clock_mhz, "MHz", {"clocks/graphics_clock"}},
    {&GpuSample::gpu_util_pct, "%", {"utilization/gpu_util"}},
    {&GpuSample::memory_util_pct, "%", {"utilization/memory_util"}},
    {&GpuSample::fb_used_mib, "MiB", {"fb_memory_usage/used"}},
    {&GpuSample::fb_total_mib, "MiB", {"fb_memory_usage/total"}},
    {&GpuSample::pcie_tx_kib_s, "KB/s", {"pci/tx_util"}},
    {&GpuSample::pcie_rx_kib_s, "KB/s", {"pci/rx_util"}},
}};

std::optional<std::uint64_t> reasons_of(const XmlElement& gpu) {
    ReasonMask mask;
    for (const auto* group : {gpu.child("clocks_event_reasons"), gpu.child("clocks_throttle_reasons")}) {
        if (!group) continue;
        for (const auto& element : group->children) {
            std::string_view suffix = element.name;
            for (const std::string_view prefix : {"clocks_event_reason_", "clocks_throttle_reason_"})
                if (suffix.starts_with(prefix)) suffix.remove_prefix(prefix.size());
            if (suffix == "display_clock_setting") suffix = "display_clocks_setting";
            for (const auto& reason : reason_names())
                if (suffix == reason.xml_suffix) mask.add(reason.bit, element.text);
        }
    }
    return mask.mask();
}

std::optional<GpuSample> sample_of(const XmlElement& gpu, int index, NvidiaSmiLog& log) {
    GpuSample sample;
    sample.gpu_index = index;
    bool any = false;
    for (const auto& mapping : kMappings) {
        const XmlElement* element = nullptr;
        for (const auto path : mapping.paths)
            if (!element && !path.empty()) element = gpu.find(path);
        if (!element) continue;
        const bool read = apply_reading(
            sample, mapping, element->text,
            fmt::format("line {}: <{}>{}</{}>", element->line, element->name, element->text, element->name), log.warnings);
        any = any || read;
    }
    if (const auto* pstate = gpu.child("performance_state")) {
        const auto reading = parse_pstate(pstate->text);
        if (reading.malformed)
            log.warnings.push_back(
                fmt::format("line {}: performance state '{}' not understood; left out", pstate->line, pstate->text));
        if (reading.value) sample.pstate = static_cast<int>(*reading.value);
    }
    sample.clock_event_reasons = reasons_of(gpu);
    any = any || sample.pstate || sample.clock_event_reasons;
    if (!any) return std::nullopt;
    return sample;
}

void read_document(const XmlElement& root, NvidiaSmiLog& log, std::vector<std::optional<std::int64_t>>& stamps) {
    std::optional<std::int64_t> stamp;
    if (const auto* timestamp = root.child("timestamp")) {
        stamp = parse_q_timestamp(timestamp->text);
        if (!stamp)
            log.warnings.push_back(
                fmt::format("line {}: timestamp '{}' not understood; ignored", timestamp->line, timestamp->text));
    }
    if (const auto* driver = root.child("driver_version"); driver && log.driver_version.empty())
        log.driver_version = driver->text;
    if (const auto* cuda = root.child("cuda_version"); cuda && log.cuda_version.empty()) log.cuda_version = cuda->text;
    int index = 0;
    for (const auto& gpu : root.children) {
        if (gpu.name != "gpu") continue;
        auto sample = sample_of(gpu, index, log);
        if (!sample) {
            log.warnings.push_back(
                fmt::format("line {}: <gpu> without any reading inferbench keeps; skipped", gpu.line));
        } else {
            if (const auto* name = gpu.child("product_name")) note_gpu_name(log, index, name->text);
            log.samples.push_back(*sample);
            stamps.push_back(stamp);
        }
        ++index;
    }
}

}  // namespace

NvidiaSmiLog parse_q_xml_log(std::string_view text, std::string_view file) {
    NvidiaSmiLog log;
    log.format = "q-xml";
    const XmlDocuments documents = XmlReader(text).read();
    std::vector<std::optional<std::int64_t>> stamps;
    std::size_t logs = 0;
    for (const auto& root : documents.roots) {
        if (root.name != "nvidia_smi_log") {
            log.warnings.push_back(fmt::format("line {}: <{}> is no <nvidia_smi_log>; skipped", root.line, root.name));
            continue;
        }
        ++logs;
        read_document(root, log, stamps);
    }
    if (!documents.error.empty()) {
        if (logs == 0) {
            throw UserError(fmt::format("{}: line {}: {}: not a complete nvidia-smi -q -x document (cut short?)", file,
                                        documents.error_line, documents.error));
        }
        log.warnings.push_back(fmt::format("line {}: {}: the rest of the file is not read (cut short?)",
                                           documents.error_line, documents.error));
    }
    if (logs == 0)
        throw UserError(fmt::format("{}: XML without an <nvidia_smi_log> element; not nvidia-smi -q -x output", file));
    assign_times(log, stamps, true);
    return log;
}

}  // namespace inferbench::telemetry::detail
