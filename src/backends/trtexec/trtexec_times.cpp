#include "backends/trtexec/trtexec_times.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/time_units.hpp"

namespace inferbench::trtexec {
namespace {

using Entry = std::map<std::string, double, std::less<>>;  // lower-case key -> ms

// A reader for exactly what exportJSONTrace writes (an array of flat objects of numbers), so the
// module needs no JSON library: it also builds where only the backend modules are built.
class FlatJsonReader {
public:
    explicit FlatJsonReader(std::string_view text) : text_(text) {}

    std::vector<Entry> read_array() {
        std::vector<Entry> entries;
        expect('[');
        if (consume(']')) return finish(std::move(entries));
        do entries.push_back(read_object());
        while (consume(','));
        expect(']');
        return finish(std::move(entries));
    }

private:
    std::vector<Entry> finish(std::vector<Entry> entries) {
        skip_space();
        if (pos_ != text_.size()) fail("text after the array");
        return entries;
    }

    Entry read_object() {
        Entry entry;
        expect('{');
        if (consume('}')) return entry;
        do {
            std::string key = read_key();
            expect(':');
            entry[std::move(key)] = read_number();
        } while (consume(','));
        expect('}');
        return entry;
    }

    std::string read_key() {
        expect('"');
        std::string key;
        while (pos_ < text_.size() && text_[pos_] != '"') {
            if (text_[pos_] == '\\') fail("escapes in keys");
            key += static_cast<char>(std::tolower(static_cast<unsigned char>(text_[pos_++])));
        }
        if (pos_ == text_.size()) fail("an unterminated key");
        ++pos_;
        return key;
    }

    double read_number() {
        skip_space();
        double value = 0;
        const char* begin = text_.data() + pos_;
        const auto [end, ec] = std::from_chars(begin, text_.data() + text_.size(), value);
        if (ec != std::errc() || !std::isfinite(value)) fail("a value that is not a finite number");
        pos_ += static_cast<std::size_t>(end - begin);
        return value;
    }

    bool consume(char c) {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }

    void expect(char c) {
        if (!consume(c)) fail(fmt::format("no '{}'", c));
    }

    void skip_space() {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error(fmt::format("trtexec times: {} at byte {}", what, pos_));
    }

    std::string_view text_;
    std::size_t pos_ = 0;
};

std::optional<double> get(const Entry& entry, std::string_view key) {
    const auto it = entry.find(key);
    if (it == entry.end()) return std::nullopt;
    return it->second;
}

// The first key present, for the names different TensorRT versions used.
std::optional<double> first_of(const Entry& entry, std::initializer_list<std::string_view> keys) {
    for (const auto key : keys) {
        if (auto value = get(entry, key)) return value;
    }
    return std::nullopt;
}

std::optional<double> span(const Entry& entry, std::initializer_list<std::string_view> starts,
                           std::initializer_list<std::string_view> ends) {
    const auto start = first_of(entry, starts);
    const auto end = first_of(entry, ends);
    if (!start || !end) return std::nullopt;
    return *end - *start;
}

std::int64_t to_ns(double ms) { return static_cast<std::int64_t>(std::llround(ms_to_ns(ms))); }

std::int64_t device_time(std::optional<double> ms) { return ms ? to_ns(*ms) : kNotMeasured; }

std::optional<IterationRecord> to_record(const Entry& e, std::int64_t origin_ns) {
    const auto start_h2d = {std::string_view("starth2dms"), std::string_view("startinms")};
    const auto end_d2h = {std::string_view("endd2hms"), std::string_view("endoutms")};
    std::optional<double> e2e = get(e, "endtoendms");
    if (!e2e) e2e = span(e, start_h2d, end_d2h);
    if (!e2e) e2e = get(e, "latencyms");
    auto compute = get(e, "computems");
    if (!compute) compute = span(e, {"startcomputems"}, {"endcomputems"});
    if (!e2e) e2e = compute;
    if (!e2e) return std::nullopt;
    IterationRecord record;
    const auto start = first_of(e, {"starth2dms", "startinms", "startenqms", "startcomputems"});
    record.start_ns = origin_ns + (start ? to_ns(*start) : 0);
    record.e2e_ns = to_ns(*e2e);
    auto enqueue = first_of(e, {"enqueuems", "enqms"});
    if (!enqueue) enqueue = span(e, {"startenqms"}, {"endenqms"});
    record.enqueue_ns = device_time(enqueue);
    auto h2d = first_of(e, {"h2dms", "inms"});
    if (!h2d) h2d = span(e, start_h2d, {"endh2dms", "endinms"});
    record.h2d_ns = device_time(h2d);
    record.compute_ns = device_time(compute);
    auto d2h = first_of(e, {"d2hms", "outms"});
    if (!d2h) d2h = span(e, {"startd2hms", "startoutms"}, end_d2h);
    record.d2h_ns = device_time(d2h);
    return record;
}

}  // namespace

std::vector<IterationRecord> parse_trtexec_times(std::string_view json, std::int64_t origin_ns) {
    std::vector<IterationRecord> records;
    for (const Entry& entry : FlatJsonReader(json).read_array()) {
        if (auto record = to_record(entry, origin_ns)) records.push_back(*record);
    }
    return records;
}

}  // namespace inferbench::trtexec
