#include "analysis/generation_bounds.hpp"

#include <fmt/format.h>

namespace inferbench::analysis {
namespace {

// The mean KV cache of the decode steps: as stored with the steps, else as core/generation counts it.
double mean_decode_kv_bytes(const GenerationMetrics& m, const DecoderFacts& decoder) {
    const std::int64_t steps = m.output_tokens - 1;
    if (steps <= 0) return 0;
    double sum = 0;
    for (std::int64_t s = 1; s <= steps; ++s) {
        const auto i = static_cast<std::size_t>(s);
        sum += i < m.kv_cache_bytes.size()
                   ? static_cast<double>(m.kv_cache_bytes[i])
                   : static_cast<double>(kv_cache_bytes(m.batch_size, m.input_tokens, s, 1)) * decoder.kv_bytes_per_token;
    }
    return sum / static_cast<double>(steps);
}

// Step s (from 1) reads input_tokens + s - 1 cached tokens of each sequence and adds one.
double mean_decode_flops(const GenerationMetrics& m, const DecoderShape& shape) {
    const std::int64_t steps = m.output_tokens - 1;
    if (steps <= 0) return 0;
    double sum = 0;
    for (std::int64_t s = 1; s <= steps; ++s) sum += forward_flops(shape, 1, m.input_tokens + s - 1);
    return sum / static_cast<double>(steps) * static_cast<double>(m.batch_size);
}

void add_ceilings(const GenerationMetrics& m, const devices::DeviceRoofs& roofs, GenerationBounds& b) {
    // Bytes that stay in a CPU's last-level cache are not read from DRAM: its bandwidth is no ceiling there, so
    // none is given (a table would show it as one, a figure draw it).
    if (roofs.last_level_cache_bytes && b.bytes_per_step <= *roofs.last_level_cache_bytes) {
        b.fits_last_level_cache = true;
        b.notes.push_back(fmt::format("decode ceiling unknown: the {:.1f} MB a decode step reads fit the CPU's {:.0f} "
                                      "MiB last-level cache, so DRAM's bandwidth does not bound it",
                                      b.bytes_per_step / 1e6, *roofs.last_level_cache_bytes / 0x1p20));
        return;
    }
    for (const bool measured : {false, true}) {
        const devices::MemoryRoof* dram = roofs.dram(measured);
        if (!dram || dram->bytes_per_s <= 0) continue;
        DecodeCeiling c{dram->origin, dram->what, dram->bytes_per_s, dram->bytes_per_s / b.bytes_per_step, {}};
        if (m.decode_steps_per_s) c.fraction = *m.decode_steps_per_s / c.steps_per_s;
        b.decode.push_back(std::move(c));
    }
    if (b.decode.empty())
        b.notes.push_back(fmt::format("decode ceiling unknown: no memory bandwidth for {} (no datasheet figure; "
                                      "`inferbench probe` on that machine measures it)",
                                      roofs.name.empty() ? std::string("this device") : roofs.name));
    else if (!roofs.dram(true))
        b.notes.emplace_back("no measured bandwidth: `inferbench probe` on that machine adds the measured ceiling");
}

void add_floors(const GenerationMetrics& m, const devices::DeviceRoofs& roofs, std::string_view precision,
                GenerationBounds& b) {
    if (!b.prefill_flops) {
        b.notes.emplace_back("TTFT floor unknown: the decoder's shape was not stored (its FLOPs need it)");
        return;
    }
    const auto roof_precision = devices::roof_precision(precision);
    if (!roof_precision) {
        b.notes.push_back(fmt::format("TTFT floor unknown: no compute roof for precision '{}'", precision));
        return;
    }
    for (const bool measured : {false, true}) {
        const devices::ComputeRoof* roof = roofs.compute_roof(*roof_precision, measured);
        if (!roof || roof->per_s <= 0) continue;
        const double floor_ns = *b.prefill_flops / roof->per_s * 1e9;
        b.prefill.push_back({roof->origin, roof->what, roof->per_s, floor_ns,
                             m.ttft.ns.mean > 0 ? floor_ns / m.ttft.ns.mean : 0.0});
    }
    if (!b.prefill.empty() && b.prefill.front().origin == devices::RoofOrigin::estimated)
        b.notes.emplace_back("TTFT floor from the CPU's estimated peak (cores x FMA lanes x clock), not a measured one");
    if (b.prefill.empty())
        b.notes.push_back(fmt::format("TTFT floor unknown: no {} compute roof for {}", precision,
                                      roofs.name.empty() ? std::string("this device") : roofs.name));
}

}  // namespace

const DecodeCeiling* GenerationBounds::decode_ceiling(bool measured) const {
    for (const auto& c : decode)
        if ((c.origin == devices::RoofOrigin::measured) == measured) return &c;
    return nullptr;
}

const PrefillFloor* GenerationBounds::prefill_floor(bool measured) const {
    for (const auto& f : prefill)
        if ((f.origin == devices::RoofOrigin::measured) == measured) return &f;
    return nullptr;
}

const DecodeCeiling* GenerationBounds::best_decode() const {
    const auto* measured = decode_ceiling(true);
    return measured ? measured : decode_ceiling(false);
}

const PrefillFloor* GenerationBounds::best_prefill() const {
    const auto* measured = prefill_floor(true);
    return measured ? measured : prefill_floor(false);
}

std::optional<GenerationBounds> generation_bounds(const GenerationMetrics& metrics, const devices::DeviceRoofs& roofs,
                                                  std::string_view precision) {
    if (!metrics.decoder) return std::nullopt;
    const DecoderFacts& decoder = *metrics.decoder;
    GenerationBounds b;
    b.weight_bytes_per_step = decoder.weight_bytes_per_step();
    b.kv_bytes_per_step = mean_decode_kv_bytes(metrics, decoder);
    b.bytes_per_step = b.weight_bytes_per_step + b.kv_bytes_per_step;
    b.kv_share = b.bytes_per_step > 0 ? b.kv_bytes_per_step / b.bytes_per_step : 0.0;
    if (decoder.shape) {
        b.prefill_flops = forward_flops(*decoder.shape, metrics.input_tokens, 0) * static_cast<double>(metrics.batch_size);
        if (metrics.output_tokens > 1) b.decode_flops_per_step = mean_decode_flops(metrics, *decoder.shape);
    }
    add_ceilings(metrics, roofs, b);
    add_floors(metrics, roofs, precision, b);
    return b;
}

}  // namespace inferbench::analysis
