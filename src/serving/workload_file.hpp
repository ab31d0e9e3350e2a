// A serving workload from a file: a stored workload (serving/workload_json), replayed exactly, or a user's
// JSONL file, one JSON object a line (blank lines skipped):
//   {"prompt": "text"}   {"prompt": [token ids]}   {"messages": [{"role": ..., "content": ...}, ...]}
// each with an optional "max_tokens" (or "output_tokens"), or ShareGPT's
//   {"conversations": [{"from": "human", "value": ...}, {"from": "gpt", "value": ...}, ...]}
// whose first human turn is the prompt and whose answer's length (1.3 tokens a word) is the output length
// unless the record gives max_tokens. Records without their own output length take the settings'
// output_tokens, as every record does with output_from_source false. A text prompt's input_tokens is an estimate
// (serving/workload_text), token ids' exact. A bad line is one UserError naming the file, the line and what is wrong.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/serving.hpp"
#include "serving/workload.hpp"

namespace inferbench::serving {

inline constexpr std::int64_t kMaxWorkloadFileBytes = std::int64_t{256} << 20;
inline constexpr std::int64_t kMaxWorkloadFileLines = kMaxWorkloadRequests;

// The workload of settings.source, a file's path. A JSONL file gives its first settings.requests records (0:
// all of them; more than it holds is refused); a stored workload is replayed whole, whatever `requests` says.
std::vector<PlannedRequest> workload_from_file(const WorkloadSettings& settings);

// The same from the file's content; `file` names it in errors.
std::vector<PlannedRequest> workload_from_content(std::string_view content, std::string_view file,
                                                  const WorkloadSettings& settings);

}  // namespace inferbench::serving
