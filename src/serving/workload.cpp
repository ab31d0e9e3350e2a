#include "serving/workload.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "serving/random_draws.hpp"
#include "serving/workload_file.hpp"
#include "serving/workload_text.hpp"

namespace inferbench::serving {
namespace {

constexpr std::array<std::pair<LengthDistribution, std::string_view>, 3> kDistributions = {{
    {LengthDistribution::fixed, "fixed"},
    {LengthDistribution::uniform, "uniform"},
    {LengthDistribution::normal, "normal"},
}};
constexpr std::array<std::pair<PromptForm, std::string_view>, 2> kForms = {{
    {PromptForm::token_ids, "token_ids"},
    {PromptForm::text, "text"},
}};

std::optional<std::string> length_problem(std::string_view name, std::int64_t value, std::int64_t max) {
    if (value < 1 || value > max) return fmt::format("serving {} {} is outside [1, {}]", name, value, max);
    return std::nullopt;
}

std::optional<std::string> spread_problem(const WorkloadSettings& s) {
    if (s.distribution == LengthDistribution::uniform && !(s.spread >= 0 && s.spread <= 1))
        return fmt::format(
            "serving length spread {} is outside [0, 1] for a uniform distribution (mean x [1 - "
            "spread, 1 + spread])",
            s.spread);
    if (s.distribution == LengthDistribution::normal && !(s.spread >= 0 && s.spread <= 10))
        return fmt::format(
            "serving length spread {} is outside [0, 10] for a normal distribution (deviation "
            "spread x mean)",
            s.spread);
    return std::nullopt;
}

std::optional<std::string> synthetic_problem(const WorkloadSettings& s) {
    if (s.requests < 1)
        return fmt::format("serving requests {} must be at least 1 for a synthetic workload", s.requests);
    if (auto p = length_problem("input_tokens", s.input_tokens, s.max_input_tokens)) return p;
    if (s.prefix_groups < 0 || s.prefix_groups > kMaxPrefixGroups)
        return fmt::format("serving prefix_groups {} is outside [0, {}]", s.prefix_groups, kMaxPrefixGroups);
    if (s.prefix_groups > 0 && (s.prefix_tokens < 1 || s.prefix_tokens >= kMaxRequestTokens))
        return fmt::format(
            "serving prefix_tokens {} is outside [1, {}): prefix groups share a prefix of at least "
            "one token",
            s.prefix_tokens, kMaxRequestTokens);
    if (s.turns < 1 || s.turns > kMaxTurns)
        return fmt::format("serving turns {} is outside [1, {}]", s.turns, kMaxTurns);
    if (s.api == ServingApi::chat && s.prompt_form == PromptForm::token_ids)
        return std::string(
            "serving prompt_form token_ids needs api completions: chat requests carry text messages; "
            "set prompt_form text");
    if (s.prompt_form == PromptForm::token_ids && (s.first_token_id < 0 || s.vocab <= s.first_token_id))
        return fmt::format(
            "token-id prompts need the model's vocabulary size above the first token id {} (vocab "
            "is {}): give the vocabulary size or use prompt_form text",
            s.first_token_id, s.vocab);
    return spread_problem(s);
}

// One session's conversation so far, in the request's form.
class Conversation {
public:
    explicit Conversation(const WorkloadSettings& settings) : settings_(settings) {}

    void add_prefix(SplitMix64 random, std::int64_t count) {
        if (is_chat()) {
            messages_.push_back({"system", seeded_words(random, count)});
            tokens_ += count;
        } else {
            append(random, count);
        }
    }
    void add_user(SplitMix64& random, std::int64_t count) {
        if (is_chat()) {
            messages_.push_back({"user", seeded_words(random, count)});
            tokens_ += count;
        } else {
            append(random, count);
        }
    }
    // The planned filler that stands for the server's answer in the next turn's prompt.
    void add_answer(SplitMix64& random, std::int64_t count) {
        if (is_chat()) {
            messages_.push_back({"assistant", seeded_words(random, count)});
            tokens_ += count;
        } else {
            append(random, count);
        }
    }
    void fill(PlannedRequest& request) const {
        request.prompt_token_ids = ids_;
        request.prompt_text = text_;
        request.messages = messages_;
        request.input_tokens = tokens_;
    }
    std::int64_t tokens() const { return tokens_; }

private:
    bool is_chat() const { return settings_.api == ServingApi::chat; }
    bool is_ids() const { return !is_chat() && settings_.prompt_form == PromptForm::token_ids; }
    void append(SplitMix64& random, std::int64_t count) {
        if (is_ids()) {
            const auto span = static_cast<std::uint64_t>(settings_.vocab - settings_.first_token_id);
            for (std::int64_t i = 0; i < count; ++i)
                ids_.push_back(settings_.first_token_id + static_cast<std::int64_t>(random.next() % span));
        } else {
            if (!text_.empty()) text_ += ' ';
            text_ += seeded_words(random, count);
        }
        tokens_ += count;
    }

    const WorkloadSettings& settings_;
    std::vector<std::int64_t> ids_;
    std::string text_;
    std::vector<ChatMessage> messages_;
    std::int64_t tokens_ = 0;
};

std::vector<PlannedRequest> synthetic_workload(const WorkloadSettings& s) {
    const auto user = draw_lengths(s.input_tokens, s.distribution, s.spread, s.max_input_tokens, s.requests, s.seed,
                                   "serving.input_lengths");
    const auto output = draw_lengths(s.output_tokens, s.distribution, s.spread, s.max_output_tokens, s.requests, s.seed,
                                     "serving.output_lengths");
    std::vector<PlannedRequest> requests;
    requests.reserve(static_cast<std::size_t>(s.requests));
    for (std::int64_t session = 0; static_cast<std::int64_t>(requests.size()) < s.requests; ++session) {
        const std::int64_t group = s.prefix_groups > 0 ? session % s.prefix_groups : -1;
        Conversation conversation(s);
        if (group >= 0)
            conversation.add_prefix(stream_for(s.seed, "serving.prefix", static_cast<std::uint64_t>(group)),
                                    s.prefix_tokens);
        for (std::int64_t turn = 0; turn < s.turns && static_cast<std::int64_t>(requests.size()) < s.requests; ++turn) {
            const auto i = static_cast<std::int64_t>(requests.size());
            const auto at = static_cast<std::size_t>(i);
            // The prefix counts towards the first prompt's length; the new part keeps at least one token.
            const std::int64_t length =
                turn == 0 && group >= 0 ? std::max<std::int64_t>(user[at] - s.prefix_tokens, 1) : user[at];
            SplitMix64 content = stream_for(s.seed, "serving.content", static_cast<std::uint64_t>(i));
            conversation.add_user(content, length);
            if (conversation.tokens() > kMaxRequestTokens)
                throw UserError(
                    fmt::format("serving request {} (turn {} of session {}) would hold {} prompt tokens, "
                                "more than {}: lower turns or input_tokens",
                                i, turn, session, conversation.tokens(), kMaxRequestTokens));
            PlannedRequest request;
            request.index = i;
            request.session = s.turns > 1 ? session : -1;
            request.turn = turn;
            request.prefix_group = group;
            request.max_tokens = output[at];
            conversation.fill(request);
            requests.push_back(std::move(request));
            conversation.add_answer(content, output[at]);
        }
    }
    return requests;
}

}  // namespace

std::string_view to_string(LengthDistribution distribution) {
    for (const auto& [value, name] : kDistributions)
        if (value == distribution) return name;
    return "unknown";
}
std::optional<LengthDistribution> parse_length_distribution(std::string_view text) {
    for (const auto& [value, name] : kDistributions)
        if (name == text) return value;
    return std::nullopt;
}
std::string_view to_string(PromptForm form) {
    for (const auto& [value, name] : kForms)
        if (value == form) return name;
    return "unknown";
}
std::optional<PromptForm> parse_prompt_form(std::string_view text) {
    for (const auto& [value, name] : kForms)
        if (name == text) return value;
    return std::nullopt;
}

std::optional<std::string> workload_problem(const WorkloadSettings& s) {
    if (s.source.empty()) return std::string("serving workload source is empty: give \"synthetic\" or a file's path");
    if (s.requests < 0 || s.requests > kMaxWorkloadRequests)
        return fmt::format("serving requests {} is outside [0, {}]", s.requests, kMaxWorkloadRequests);
    if (auto p = length_problem("max_input_tokens", s.max_input_tokens, kMaxRequestTokens)) return p;
    if (auto p = length_problem("max_output_tokens", s.max_output_tokens, kMaxRequestTokens)) return p;
    if (auto p = length_problem("output_tokens", s.output_tokens, s.max_output_tokens)) return p;
    if (s.source == kSyntheticSource) return synthetic_problem(s);
    return std::nullopt;
}

std::vector<std::int64_t> draw_lengths(std::int64_t mean, LengthDistribution distribution, double spread,
                                       std::int64_t max, std::int64_t count, std::uint64_t seed, const char* purpose) {
    SplitMix64 random = stream_for(seed, purpose);
    const auto m = static_cast<double>(mean);
    std::vector<std::int64_t> lengths;
    lengths.reserve(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)));
    for (std::int64_t i = 0; i < count; ++i) {
        double length = m;
        if (distribution == LengthDistribution::uniform) {
            const auto low = std::llround(m * (1 - spread));
            const auto width = static_cast<std::uint64_t>(std::llround(m * (1 + spread)) - low + 1);
            length = static_cast<double>(low + static_cast<std::int64_t>(random.next() % width));
        } else if (distribution == LengthDistribution::normal) {
            length = std::round(m + spread * m * normal_draw(random));
        }
        lengths.push_back(static_cast<std::int64_t>(std::clamp(length, 1.0, static_cast<double>(max))));
    }
    return lengths;
}

std::vector<PlannedRequest> make_workload(const WorkloadSettings& settings) {
    if (auto problem = workload_problem(settings)) throw UserError(*problem);
    if (settings.source == kSyntheticSource) return synthetic_workload(settings);
    return workload_from_file(settings);
}

}  // namespace inferbench::serving
