#include "core/serving.hpp"

#include <array>
#include <utility>

namespace inferbench {
namespace {

constexpr std::array<std::pair<ServingApi, std::string_view>, 2> kApis = {{
    {ServingApi::completions, "completions"},
    {ServingApi::chat, "chat"},
}};

constexpr std::array<std::pair<RequestOutcome, std::string_view>, 9> kOutcomes = {{
    {RequestOutcome::ok, "ok"},
    {RequestOutcome::http_status, "http_status"},
    {RequestOutcome::connect_failed, "connect_failed"},
    {RequestOutcome::timeout, "timeout"},
    {RequestOutcome::truncated, "truncated"},
    {RequestOutcome::server_error, "server_error"},
    {RequestOutcome::malformed, "malformed"},
    {RequestOutcome::wrong_token_count, "wrong_token_count"},
    {RequestOutcome::cancelled, "cancelled"},
}};

template <typename Enum, std::size_t N>
std::string_view name_of(const std::array<std::pair<Enum, std::string_view>, N>& table, Enum value) {
    for (const auto& [entry, name] : table)
        if (entry == value) return name;
    return "unknown";
}

template <typename Enum, std::size_t N>
std::optional<Enum> value_of(const std::array<std::pair<Enum, std::string_view>, N>& table, std::string_view text) {
    for (const auto& [entry, name] : table)
        if (name == text) return entry;
    return std::nullopt;
}

}  // namespace

std::string_view to_string(ServingApi api) { return name_of(kApis, api); }
std::optional<ServingApi> parse_serving_api(std::string_view text) { return value_of(kApis, text); }
std::string_view to_string(RequestOutcome outcome) { return name_of(kOutcomes, outcome); }
std::optional<RequestOutcome> parse_request_outcome(std::string_view text) { return value_of(kOutcomes, text); }

}  // namespace inferbench
