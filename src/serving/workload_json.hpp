// A workload as JSON, to store it with a run and replay it: every planned request with its exact prompt, so a
// replay sends the same bytes. workload_from_json(workload_json(r)) == r. The fingerprint names a workload in
// 16 hex digits, so two runs can show that they sent the same requests.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/serving.hpp"

namespace inferbench::serving {

inline constexpr std::string_view kWorkloadFormat = "inferbench-serving-workload";
inline constexpr std::int64_t kWorkloadFormatVersion = 1;

// {"format": kWorkloadFormat, "version": 1, "requests": [{index, session, turn, prefix_group, input_tokens,
// max_tokens, and prompt_token_ids, prompt_text or messages: [{role, content}]}]}; empty prompt fields left out.
nlohmann::json workload_json(std::span<const PlannedRequest> requests);

// The requests of a stored workload. Throws UserError naming the request and what is wrong with it.
std::vector<PlannedRequest> workload_from_json(const nlohmann::json& json);

// Whether `json` is a stored workload (its "format" says so), not a record of a user's JSONL file.
bool is_stored_workload(const nlohmann::json& json);

// FNV-1a (core/fnv1a) of the workload's JSON text, as 16 lowercase hex digits.
std::string workload_fingerprint(std::span<const PlannedRequest> requests);

}  // namespace inferbench::serving
