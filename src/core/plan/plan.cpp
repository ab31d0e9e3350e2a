#include "core/plan/plan.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/error.hpp"
#include "core/plan/model_spec.hpp"
#include "core/plan/stop_checks.hpp"
#include "core/plan/plan_scenario.hpp"
#include "core/text_checks.hpp"
#include "core/units.hpp"

namespace inferbench {
namespace {

UserError error_at(std::string_view source, const YAML::Mark& mark, const std::string& what) {
    return UserError(fmt::format("{}:{}:{}: {}", source, mark.line + 1, mark.column + 1, what));
}

[[noreturn]] void fail_at(std::string_view source, const YAML::Mark& mark, const std::string& what) {
    throw error_at(source, mark, what);
}

void require_plan_size(std::uintmax_t bytes, std::string_view source) {
    if (bytes <= kMaxPlanBytes) return;
    throw UserError(fmt::format("{}: the plan is {} bytes, above the {} bytes a plan may have; a plan lists "
                                "settings and names, give one that does",
                                source, bytes, kMaxPlanBytes));
}

// Names and paths end up in JSON, which must be UTF-8: a plan file that is not is refused where it
// first goes wrong.
void reject_invalid_utf8(std::string_view text, std::string_view source) {
    const auto offset = invalid_utf8_offset(text);
    if (!offset) return;
    const std::string_view before = text.substr(0, *offset);
    const auto line = std::count(before.begin(), before.end(), '\n') + 1;
    const std::size_t newline = before.rfind('\n');
    const std::size_t column = newline == std::string_view::npos ? *offset : *offset - newline - 1;
    throw UserError(fmt::format("{}:{}:{}: {}; save the plan as UTF-8 text", source, line, column + 1,
                                *utf8_problem(text)));
}

std::vector<std::string> precision_names() {
    std::vector<std::string> names;
    for (Precision p : kAllPrecisions) names.emplace_back(to_string(p));
    return names;
}

bool looks_like_path(std::string_view value) {
    return value.find('/') != std::string_view::npos || value.ends_with(".onnx") || value.ends_with(".pt") ||
           value.ends_with(".pb") || value.ends_with(".engine");
}

std::string_view file_kind(std::filesystem::file_type type) {
    switch (type) {
        case std::filesystem::file_type::fifo: return "a FIFO";
        case std::filesystem::file_type::socket: return "a socket";
        case std::filesystem::file_type::block: return "a block device";
        case std::filesystem::file_type::character: return "a character device";
        default: return "a special file";
    }
}

// Looks with stat() only: opening a FIFO to look at it would wait for a writer.
std::optional<std::string> model_file_problem(std::string_view value, const PlanVocabulary& vocabulary) {
    std::error_code ec;
    const auto status = std::filesystem::status(std::string(value), ec);
    if (std::filesystem::is_regular_file(status)) return std::nullopt;
    const std::string fix = fmt::format("give a model file or a zoo model ({})", join(vocabulary.models, ", "));
    if (std::filesystem::is_directory(status)) return fmt::format("model '{}' is a directory; {}", value, fix);
    if (std::filesystem::exists(status))
        return fmt::format("model '{}' is not a regular file ({}); {}", value, file_kind(status.type()), fix);
    if (ec && ec != std::errc::no_such_file_or_directory)
        return fmt::format("model file '{}' cannot be looked at: {}; check its folder's permissions", value,
                           ec.message());
    return fmt::format("model file '{}' not found; give an existing path or a zoo model ({})", value,
                       join(vocabulary.models, ", "));
}

bool is_special_file(std::string_view value) {
    std::error_code ec;
    const auto status = std::filesystem::status(std::string(value), ec);
    return std::filesystem::exists(status) && !std::filesystem::is_regular_file(status);
}

bool is_axis(std::string_view key) {
    for (std::string_view axis : kAxisKeys) {
        if (axis == key) return true;
    }
    return false;
}

bool contains(const std::vector<std::string>& names, std::string_view value) {
    for (const auto& name : names) {
        if (name == value) return true;
    }
    return false;
}

std::vector<std::string> setting_keys() {
    std::vector<std::string> keys;
    for (std::string_view axis : kAxisKeys) keys.emplace_back(axis);
    keys.emplace_back("exclude");
    keys.emplace_back("backend_options");
    keys.emplace_back("cpu_affinity");
    keys.emplace_back(std::string(kEndpointKey));
    keys.emplace_back(std::string(kPipelineKey));
    for (const auto& field : setting_fields()) keys.emplace_back(field.key);
    return keys;
}

// The text of a plain value. YAML reads `null` (the null model and backend) as a null node: keep
// it as the word.
std::optional<std::string> scalar_text(const YAML::Node& node) {
    if (node.IsNull()) return "null";
    if (node.IsScalar()) return node.Scalar();
    return std::nullopt;
}

// yaml-cpp keeps every entry of a map; without this the last of a repeated key would silently win.
void reject_duplicate_keys(const YAML::Node& map, std::string_view source, std::string_view prefix) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& entry : map) {
        const std::string key = scalar_text(entry.first).value_or("");
        const auto [first, added] = seen.emplace(key, entry.first.Mark());
        if (!added)
            fail_at(source, entry.first.Mark(),
                    fmt::format("duplicate key '{}{}' (first at line {}); keep one of them", prefix, key,
                                first->second.line + 1));
    }
}

std::string repeat_message(std::string_view list, const std::string& value) {
    return fmt::format("{} lists '{}' twice; list each value once", list, value);
}

// The one reading of a value from its text: the typed value, or nothing with `why` saying what is
// wrong and how to fix it. Plan files, --set, the run flags and stored plans all read through these.
template <typename T>
using Reader = std::optional<T> (*)(std::string_view text, const PlanVocabulary& vocabulary, std::string& why);

std::optional<std::string> read_model(std::string_view text, const PlanVocabulary& vocabulary, std::string& why) {
    if (text.size() > kMaxTextBytes) {
        why = fmt::format("a model name or path of {} bytes, above the {} bytes one may have; give a shorter one",
                          text.size(), kMaxTextBytes);
        return std::nullopt;
    }
    if (contains(vocabulary.models, text)) return std::string(text);
    if (is_served_model(text)) {
        const std::string_view name = served_model_name(text);
        if (!name.empty() && std::ranges::none_of(name, [](char c) { return c == '\n' || c == '\r'; }))
            return std::string(text);
        why = fmt::format("model '{}': write served:NAME, NAME the model's name on the server (its /v1/models id)", text);
        return std::nullopt;
    }
    if (looks_like_model_spec(text) && !is_special_file(text) && !std::filesystem::exists(std::string(text))) {
        const auto problem = model_spec_problem(text);
        if (!problem) return std::string(text);
        why = *problem;
        return std::nullopt;
    }
    if (looks_like_path(text) || is_special_file(text)) {
        const auto problem = model_file_problem(text, vocabulary);
        if (!problem) return std::string(text);
        why = *problem;
        return std::nullopt;
    }
    why = fmt::format("unknown model '{}'; valid choices: {}, a path to a model file, a PyTorch model spec "
                      "(torchvision:NAME, timm:NAME, hf:NAME, python:PATH.py:FACTORY), or served:NAME (a model a server "
                      "serves, for the openai backend)",
                      text, join(vocabulary.models, ", "));
    return std::nullopt;
}

std::optional<std::string> read_backend(std::string_view text, const PlanVocabulary& vocabulary, std::string& why) {
    if (contains(vocabulary.backends, text)) return std::string(text);
    why = fmt::format("unknown backend '{}'; valid choices: {}", text, join(vocabulary.backends, ", "));
    return std::nullopt;
}

std::optional<Device> read_device(std::string_view text, const PlanVocabulary& /*vocabulary*/, std::string& why) {
    const auto device = parse_device(text);
    if (!device) why = fmt::format("unknown device '{}'; valid choices: cpu, cuda, cuda:N", text);
    return device;
}

std::optional<Precision> read_precision(std::string_view text, const PlanVocabulary& /*vocabulary*/, std::string& why) {
    const auto precision = parse_precision(text);
    if (!precision)
        why = fmt::format("unknown precision '{}'; valid choices: {}", text, join(precision_names(), ", "));
    return precision;
}

std::optional<std::int64_t> read_batch(std::string_view text, const PlanVocabulary& /*vocabulary*/, std::string& why) {
    if (const auto batch = parse_batch_size(text)) return batch;
    why = fmt::format("batch size '{}' must be a whole number from 1 to {}", text, kMaxBatchSize);
    return std::nullopt;
}

std::optional<std::int64_t> read_tokens(std::string_view text, const PlanVocabulary& /*vocabulary*/, std::string& why) {
    if (const auto tokens = parse_token_count(text)) return tokens;
    why = fmt::format("token count '{}' must be a whole number from 1 to {}", text, kMaxGenerationTokens);
    return std::nullopt;
}

// A backend option's value stays text: the backend reads it (backends/options).
std::optional<std::string> read_option_value(std::string_view text, const PlanVocabulary& /*vocabulary*/,
                                             std::string& /*why*/) {
    return std::string(text);
}

// What is wrong with a list, at which item; for a repeat also the item that listed the value first.
struct ListProblem {
    std::size_t at = 0;
    std::string what;
    std::optional<std::size_t> first;
};

// Turns a problem into the error of where the list came from (a plan file's positions, a flag).
using ListFailure = std::function<UserError(const ListProblem&)>;

// Reads every item of a list once, then refuses a value listed twice: a repeat would measure the same
// cells twice. Values compare as their type, so cuda and cuda:0, or 8 and 08, are one value.
template <typename T>
std::vector<T> read_list(std::string_view list, const std::vector<std::string>& texts, Reader<T> read,
                         const PlanVocabulary& vocabulary, const ListFailure& fail) {
    std::vector<T> values;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        std::string why;
        auto value = read(texts[i], vocabulary, why);
        if (!value) throw fail({i, why, std::nullopt});
        values.push_back(std::move(*value));
    }
    std::map<T, std::size_t> seen;
    for (std::size_t i = 0; i < values.size(); ++i) {
        const auto [first, added] = seen.emplace(values[i], i);
        if (!added) throw fail({i, repeat_message(list, texts[i]), first->second});
    }
    return values;
}

void read_axis(Plan& plan, std::string_view axis, const std::vector<std::string>& texts,
               const PlanVocabulary& vocabulary, const ListFailure& fail) {
    if (axis == "models") plan.models = read_list(axis, texts, read_model, vocabulary, fail);
    else if (axis == "backends") plan.backends = read_list(axis, texts, read_backend, vocabulary, fail);
    else if (axis == "devices") plan.devices = read_list(axis, texts, read_device, vocabulary, fail);
    else if (axis == "precisions") plan.precisions = read_list(axis, texts, read_precision, vocabulary, fail);
    else if (axis == "input_tokens") plan.input_tokens = read_list(axis, texts, read_tokens, vocabulary, fail);
    else if (axis == "output_tokens") plan.output_tokens = read_list(axis, texts, read_tokens, vocabulary, fail);
    else plan.batch_sizes = read_list(axis, texts, read_batch, vocabulary, fail);
}

// One value at a plan file's position, read once.
template <typename T>
T read_at(Reader<T> read, const std::string& text, const PlanVocabulary& vocabulary, std::string_view source,
          const YAML::Mark& mark) {
    std::string why;
    auto value = read(text, vocabulary, why);
    if (!value) fail_at(source, mark, why);
    return std::move(*value);
}

using ScalarItems = std::vector<std::pair<std::string, YAML::Mark>>;

// Accepts a list of scalars, or one scalar as a list of one.
ScalarItems scalar_list(const YAML::Node& node, std::string_view key, std::string_view source) {
    ScalarItems items;
    if (node.IsScalar()) {
        items.emplace_back(node.Scalar(), node.Mark());
    } else if (node.IsSequence()) {
        for (const auto& item : node) {
            const auto text = scalar_text(item);
            if (!text) fail_at(source, item.Mark(), fmt::format("{} must list plain values, e.g. {}: [a, b]", key, key));
            items.emplace_back(*text, item.Mark());
        }
    } else {
        fail_at(source, node.Mark(), fmt::format("{} must be a list, e.g. {}: [a, b]", key, key));
    }
    if (items.empty())
        fail_at(source, node.Mark(), fmt::format("{} is empty; list at least one value", key));
    return items;
}

std::vector<std::string> texts_of(const ScalarItems& items) {
    std::vector<std::string> texts;
    for (const auto& item : items) texts.push_back(item.first);
    return texts;
}

// A list's problem at its item's position in the plan file (a repeat also says where it came first).
ListFailure at_items(const ScalarItems& items, std::string_view source) {
    return [&items, source](const ListProblem& problem) {
        std::string what = problem.what;
        if (problem.first) {
            const YAML::Mark& first = items[*problem.first].second;
            what += fmt::format(" (first at {}:{})", first.line + 1, first.column + 1);
        }
        return error_at(source, items[problem.at].second, what);
    };
}

// A list's problem after the flag that gave it.
ListFailure after_origin(std::string_view origin) {
    return [origin](const ListProblem& problem) { return UserError(fmt::format("{}: {}", origin, problem.what)); };
}

void parse_axis(Plan& plan, std::string_view axis, const YAML::Node& node, std::string_view source,
                const PlanVocabulary& vocabulary) {
    const ScalarItems items = scalar_list(node, axis, source);
    read_axis(plan, axis, texts_of(items), vocabulary, at_items(items, source));
}

ExcludeRule parse_exclude_rule(const YAML::Node& node, std::string_view source, const PlanVocabulary& vocabulary) {
    if (!node.IsMap() || node.size() == 0)
        fail_at(source, node.Mark(), "an exclude rule must be a map, e.g. {backend: torch, precision: int8}");
    reject_duplicate_keys(node, source, "exclude.");
    ExcludeRule rule;
    for (const auto& entry : node) {
        const std::string key = entry.first.Scalar();
        const auto value = scalar_text(entry.second);
        if (!value) fail_at(source, entry.second.Mark(), fmt::format("exclude.{} must be a plain value", key));
        const bool tokens = key == "input_tokens" || key == "output_tokens";
        const std::string axis = key == "batch_size" ? "batch_sizes" : tokens ? key : key + "s";
        if (!is_axis(axis)) {
            fail_at(source, entry.first.Mark(),
                    fmt::format("unknown exclude key '{}'; valid keys: model, backend, device, precision, batch_size, "
                                "input_tokens, output_tokens",
                                key));
        }
        const YAML::Mark& mark = entry.second.Mark();
        if (key == "model") rule.model = read_at(read_model, *value, vocabulary, source, mark);
        else if (key == "backend") rule.backend = read_at(read_backend, *value, vocabulary, source, mark);
        else if (key == "device") rule.device = read_at(read_device, *value, vocabulary, source, mark);
        else if (key == "precision") rule.precision = read_at(read_precision, *value, vocabulary, source, mark);
        else if (key == "input_tokens") rule.input_tokens = read_at(read_tokens, *value, vocabulary, source, mark);
        else if (key == "output_tokens") rule.output_tokens = read_at(read_tokens, *value, vocabulary, source, mark);
        else rule.batch_size = read_at(read_batch, *value, vocabulary, source, mark);
    }
    return rule;
}

void parse_backend_options(Plan& plan, const YAML::Node& node, std::string_view source,
                           const PlanVocabulary& vocabulary) {
    if (!node.IsMap())
        fail_at(source, node.Mark(), "backend_options must map a backend to its options, e.g. onnxruntime: {threads: 2}");
    reject_duplicate_keys(node, source, "backend_options.");
    for (const auto& entry : node) {
        const std::string backend =
            read_at(read_backend, scalar_text(entry.first).value_or(""), vocabulary, source, entry.first.Mark());
        if (!entry.second.IsMap())
            fail_at(source, entry.second.Mark(), fmt::format("backend_options.{} must be a map of options", backend));
        reject_duplicate_keys(entry.second, source, fmt::format("backend_options.{}.", backend));
        for (const auto& option : entry.second) {
            const std::string key = fmt::format("backend_options.{}.{}", backend, option.first.Scalar());
            const ScalarItems items = scalar_list(option.second, key, source);
            plan.backend_options[backend][option.first.Scalar()] =
                read_list(key, texts_of(items), read_option_value, vocabulary, at_items(items, source));
        }
    }
}

void parse_cpu_affinity(Plan& plan, const YAML::Node& node, std::string_view source) {
    if (!node.IsMap())
        fail_at(source, node.Mark(), "cpu_affinity must map a device to its CPUs, e.g. {cuda:0: \"0-7\", cuda:1: \"8-15\"}");
    std::vector<CpuAffinityEntry> entries;
    for (const auto& entry : node) {
        const auto cpus = scalar_text(entry.second);
        const std::string device = scalar_text(entry.first).value_or("");
        if (!cpus) fail_at(source, entry.second.Mark(), fmt::format("cpu_affinity.{} must be a CPU list, e.g. \"0-7\"", device));
        const YAML::Mark mark = entry.second.Mark();
        entries.push_back({device, *cpus, fmt::format("{}:{}:{}", source, mark.line + 1, mark.column + 1)});
    }
    plan.cpu_affinity = read_cpu_affinity_map(entries);
}

// A setting's single value: it replaces a list given before (an override of a plan file's sweep).
void set_single(Plan& plan, const SettingField& field, std::string_view text, const std::function<UserError(std::string)>& fail) {
    std::erase_if(plan.setting_axes, [&](const SettingAxis& axis) { return axis.key == field.key; });
    if (auto why = set_setting(plan.settings, field, text)) throw fail(*why);
}

// A sweepable setting's list: each value read once (set_setting's rules and messages) into a copy of the plan's
// settings, a value listed twice refused; the first value is also the plan's setting (the checks read it).
void read_setting_axis(Plan& plan, const SettingField& field, const std::vector<std::string>& texts,
                       const ListFailure& fail) {
    SettingAxis axis{std::string(field.key), {}};
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        RunSettings value = plan.settings;
        if (auto why = set_setting(value, field, texts[i])) throw fail({i, *why, std::nullopt});
        const auto [first, added] = seen.emplace(setting_text(value, field), i);
        if (!added) throw fail({i, repeat_message(field.key, texts[i]), first->second});
        axis.values.push_back(std::move(value));
    }
    std::erase_if(plan.setting_axes, [&](const SettingAxis& a) { return a.key == field.key; });
    copy_setting(plan.settings, axis.values.front(), field);
    if (axis.values.size() > 1) plan.setting_axes.push_back(std::move(axis));
}

void parse_setting(Plan& plan, const SettingField& field, const YAML::Node& value, std::string_view source) {
    if (value.IsSequence() && is_sweepable(field.key)) {
        const ScalarItems items = scalar_list(value, field.key, source);
        read_setting_axis(plan, field, texts_of(items), at_items(items, source));
        return;
    }
    const auto text = scalar_text(value);
    if (!text) fail_at(source, value.Mark(), fmt::format("{} must be a single {}", field.key, type_name(field.type)));
    set_single(plan, field, *text, [&](const std::string& why) { return error_at(source, value.Mark(), why); });
}

// `pipeline:` a map of core/plan/pipeline_plan's keys; `steps:` in it a map of its own (steps.KEY). An axis key
// takes a list; steps.mean and steps.std take their three numbers as a list.
void parse_pipeline_map(Plan& plan, const YAML::Node& node, std::string_view prefix, std::string_view source) {
    if (!node.IsMap())
        fail_at(source, node.Mark(),
                fmt::format("{} must be a map, e.g. pipeline: {{images: synthetic, mode: [sequential, overlapped]}}",
                            prefix.empty() ? "pipeline" : "pipeline.steps"));
    reject_duplicate_keys(node, source, fmt::format("pipeline.{}", prefix));
    for (const auto& entry : node) {
        const std::string key = fmt::format("{}{}", prefix, scalar_text(entry.first).value_or(""));
        if (key == "steps") {
            parse_pipeline_map(plan, entry.second, "steps.", source);
            continue;
        }
        const PipelineKey* field = find_pipeline_key(key);
        if (!field)
            fail_at(source, entry.first.Mark(),
                    fmt::format("unknown key 'pipeline.{}'; valid keys: {}", key, pipeline_key_names()));
        std::vector<std::string> values;
        if (entry.second.IsSequence()) {
            values = texts_of(scalar_list(entry.second, "pipeline." + key, source));
            if (key == "steps.mean" || key == "steps.std") values = {join(values, ",")};
        } else if (const auto text = scalar_text(entry.second)) {
            values = {*text};
        } else {
            fail_at(source, entry.second.Mark(), fmt::format("pipeline.{} must be a plain value", key));
        }
        if (auto why = set_pipeline_key(plan.pipeline, key, values)) fail_at(source, entry.second.Mark(), *why);
    }
}

void parse_entry(Plan& plan, const std::string& key, const YAML::Node& key_node, const YAML::Node& value,
                 std::string_view source, const PlanVocabulary& vocabulary) {
    plan.origins[key] = fmt::format("{}:{}:{}", source, value.Mark().line + 1, value.Mark().column + 1);
    if (is_axis(key)) {
        parse_axis(plan, key, value, source, vocabulary);
    } else if (key == "exclude") {
        if (!value.IsSequence()) fail_at(source, value.Mark(), "exclude must be a list of rules");
        for (const auto& rule : value) plan.exclude.push_back(parse_exclude_rule(rule, source, vocabulary));
    } else if (key == "backend_options") {
        parse_backend_options(plan, value, source, vocabulary);
    } else if (key == "cpu_affinity") {
        parse_cpu_affinity(plan, value, source);
    } else if (key == kPipelineKey) {
        parse_pipeline_map(plan, value, "", source);
        if (!plan.pipeline.active())
            fail_at(source, value.Mark(), "pipeline.images is missing; give synthetic or a folder of JPEG/PNG images");
    } else if (key == kEndpointKey) {
        YAML::Node options;
        options[std::string(kServingBackend)]["endpoint"] = value;
        parse_backend_options(plan, options, source, vocabulary);
    } else if (const SettingField* field = find_setting(key)) {
        parse_setting(plan, *field, value, source);
    } else {
        fail_at(source, key_node.Mark(),
                fmt::format("unknown key '{}'; valid keys: {}", key, join(setting_keys(), ", ")));
    }
}

}  // namespace

bool ExcludeRule::matches(const BenchmarkSpec& spec) const {
    return (!model || *model == spec.model) && (!backend || *backend == spec.backend) &&
           (!device || *device == spec.device) && (!precision || *precision == spec.precision) &&
           (!batch_size || *batch_size == spec.batch_size) &&
           (!input_tokens || (spec.generation.active() && *input_tokens == spec.generation.input_tokens)) &&
           (!output_tokens || (spec.generation.active() && *output_tokens == spec.generation.output_tokens));
}

Plan parse_plan(std::string_view yaml_text, std::string_view source, const PlanVocabulary& vocabulary) {
    require_plan_size(yaml_text.size(), source);
    reject_invalid_utf8(yaml_text, source);
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml_text));
    } catch (const YAML::ParserException& e) {
        fail_at(source, e.mark, fmt::format("invalid YAML: {}", e.msg));
    }
    Plan plan;
    plan.source = std::string(source);
    if (root.IsNull())
        throw UserError(fmt::format("plan {} is empty; give at least one key, e.g. models: [resnet50] (without a "
                                    "plan file, run uses the default plan)",
                                    source));
    if (!root.IsMap()) fail_at(source, root.Mark(), "a plan must be a map of keys, e.g. models: [resnet50]");
    reject_duplicate_keys(root, source, "");
    for (const auto& entry : root) {
        if (!entry.first.IsScalar()) fail_at(source, entry.first.Mark(), "plan keys must be plain names");
        parse_entry(plan, entry.first.Scalar(), entry.first, entry.second, source, vocabulary);
    }
    return plan;
}

Plan load_plan_file(const std::string& path, const PlanVocabulary& vocabulary) {
    if (const auto why = utf8_problem(path))
        throw UserError(fmt::format("plan file '{}': its path is {}; rename it", escape_invalid_utf8(path), *why));
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (std::filesystem::is_directory(status))
        throw UserError(fmt::format("{}: is a directory; give a plan file (YAML)", path));
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
        throw UserError(fmt::format("{}: is not a regular file ({}); give a plan file (YAML)", path,
                                    file_kind(status.type())));
    if (const auto bytes = std::filesystem::file_size(path, ec); !ec) require_plan_size(bytes, path);
    std::ifstream in(path);
    if (!in) throw UserError(fmt::format("{}: cannot read the plan file; check the path", path));
    std::stringstream text;
    text << in.rdbuf();
    return parse_plan(text.str(), path, vocabulary);
}

void apply_override(Plan& plan, std::string_view key, std::string_view value, std::string_view origin,
                    const PlanVocabulary& vocabulary) {
    if (const auto why = utf8_problem(value))
        throw UserError(fmt::format("{}: the value is {}; names and paths must be UTF-8 (rename the file or folder)",
                                    escape_invalid_utf8(origin), *why));
    plan.origins[std::string(key)] = std::string(origin);
    if (is_axis(key)) {
        const auto texts = split_list(value);
        for (const auto& item : texts)
            if (item.empty()) throw UserError(fmt::format("{}: empty item in the list", origin));
        read_axis(plan, key, texts, vocabulary, after_origin(origin));
        return;
    }
    if (key == kEndpointKey)
        return apply_override(plan, fmt::format("backend_options.{}.endpoint", kServingBackend), value, origin, vocabulary);
    if (key.starts_with("backend_options.")) {
        const std::string_view rest = key.substr(std::string_view("backend_options.").size());
        const auto dot = rest.find('.');
        if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size())
            throw UserError(fmt::format("{}: write backend_options.BACKEND.OPTION=VALUE[,VALUE...]", origin));
        std::string why;
        const auto backend = read_backend(rest.substr(0, dot), vocabulary, why);
        if (!backend) throw UserError(fmt::format("{}: {}", origin, why));
        plan.backend_options[*backend][std::string(rest.substr(dot + 1))] =
            read_list(key, split_list(value), read_option_value, vocabulary, after_origin(origin));
        return;
    }
    if (key.starts_with("pipeline.")) {
        const std::string_view name = key.substr(std::string_view("pipeline.").size());
        const PipelineKey* field = find_pipeline_key(name);
        const std::vector<std::string> values =
            field && field->axis ? split_list(value) : std::vector<std::string>{std::string(value)};
        if (auto why = set_pipeline_key(plan.pipeline, name, values)) throw UserError(fmt::format("{}: {}", origin, *why));
        plan.origins[std::string(kPipelineKey)] = std::string(origin);
        return;
    }
    if (key.starts_with("cpu_affinity.")) {
        auto [device, cpus] = read_cpu_affinity(key.substr(std::string_view("cpu_affinity.").size()), value, origin);
        plan.cpu_affinity[device] = std::move(cpus);
        plan.origins["cpu_affinity"] = std::string(origin);
        return;
    }
    const SettingField* field = find_setting(key);
    if (!field) {
        throw UserError(fmt::format("{}: unknown key '{}'; valid keys: {}", origin, key, join(setting_keys(), ", ")));
    }
    if (is_sweepable(key) && value.find(',') != std::string_view::npos) {
        const auto texts = split_list(value);
        for (const auto& item : texts)
            if (item.empty()) throw UserError(fmt::format("{}: empty item in the list", origin));
        read_setting_axis(plan, *field, texts, after_origin(origin));
        return;
    }
    set_single(plan, *field, value, [&](const std::string& why) { return UserError(fmt::format("{}: {}", origin, why)); });
}

std::vector<SettingPoint> setting_points(const Plan& plan) {
    std::vector<SettingPoint> points = {{plan.settings, ""}};
    for (const SettingAxis& axis : plan.setting_axes) {
        const SettingField& field = *find_setting(axis.key);
        std::vector<SettingPoint> next;
        for (const SettingPoint& point : points) {
            for (const RunSettings& value : axis.values) {
                SettingPoint swept = point;
                copy_setting(swept.settings, value, field);
                swept.label += fmt::format("{}{}={}", swept.label.empty() ? "" : " ", axis.key, setting_text(value, field));
                next.push_back(std::move(swept));
            }
        }
        points = std::move(next);
    }
    return points;
}

namespace {

// Settings that concern CUDA devices or GPU telemetry, against the devices and telemetry of the plan.
void check_gpu_settings(const Plan& plan) {
    const RunSettings& s = plan.settings;
    const bool any_cuda = std::any_of(plan.devices.begin(), plan.devices.end(),
                                      [](const Device& d) { return d.kind == DeviceKind::cuda; });
    const auto require_cuda = [&](const char* key, const char* what) {
        if (!any_cuda)
            throw UserError(fmt::format("{}: {} {}, and the plan's devices are all cpu; remove {} or add a cuda device",
                                        origin_of(plan, {key}), key, what, key));
    };
    if (s.l2_flush) require_cuda("l2_flush", "flushes a GPU's L2 cache");
    if (s.sync != "auto") require_cuda("sync", "sets how the CPU waits for a GPU");
    if (s.cooldown_ns != kCooldownUntilIdle) return;
    require_cuda("cooldown", "idle waits for a GPU to cool down");
    if (!s.telemetry_enabled || s.telemetry_gpu == "off")
        throw UserError(fmt::format("{}: cooldown idle reads the GPU's temperature and power, and GPU telemetry is off; "
                                    "turn it on (telemetry_enabled, telemetry_gpu) or give the cooldown as a time, e.g. 30s",
                                    origin_of(plan, {"cooldown"})));
    if (s.idle_baseline_ns == 0)
        throw UserError(fmt::format("{}: cooldown idle waits for the idle baseline, and idle_baseline is 0 (not "
                                    "measured); set idle_baseline (e.g. 3s) or give the cooldown as a time, e.g. 30s",
                                    origin_of(plan, {"cooldown"})));
}

}  // namespace

std::string origin_of(const Plan& plan, std::initializer_list<std::string_view> keys) {
    for (const std::string_view key : keys)
        if (const auto it = plan.origins.find(key); it != plan.origins.end()) return it->second;
    return plan.source;
}

void check_plan(const Plan& plan) {
    check_gpu_settings(plan);
    check_scenario(plan);
    const RunSettings& settings = plan.settings;
    const LoopSettings& loop = settings.loop;
    if (loop.max_iterations != 0 && loop.min_iterations > loop.max_iterations)
        throw UserError(fmt::format("{}: min_iterations {} is above max_iterations {}; lower min_iterations or raise "
                                    "max_iterations (0: no limit)",
                                    plan.source, loop.min_iterations, loop.max_iterations));
    check_stop_settings(plan);
    check_cpu_affinity(plan);
    if (plan.pipeline.active() && plan.pipeline.settings.images == kSyntheticImages && plan.pipeline.settings.image_count < 1)
        throw UserError(fmt::format("{}: pipeline.image_count is 0, and synthetic images need at least one; give a count "
                                    "of 1 or more (0 means all of a folder's images)",
                                    origin_of(plan, {kPipelineKey})));
    // The cache folder may come from XDG_CACHE_HOME or HOME, which no plan check has seen.
    const std::string cache = resolved_model_cache(settings);
    if (const auto why = utf8_problem(cache))
        throw UserError(fmt::format("model cache folder '{}' is {}; set model_cache to a UTF-8 path",
                                    escape_invalid_utf8(cache), *why));
}

std::string plan_to_json(const Plan& plan) {
    nlohmann::ordered_json json;
    json["source"] = plan.source;
    json["models"] = plan.models;
    json["backends"] = plan.backends;
    json["devices"] = nlohmann::ordered_json::array();
    for (const Device& device : plan.devices) json["devices"].push_back(to_string(device));
    json["precisions"] = nlohmann::ordered_json::array();
    for (const Precision precision : plan.precisions) json["precisions"].push_back(to_string(precision));
    json["batch_sizes"] = plan.batch_sizes;
    json["input_tokens"] = plan.input_tokens;
    json["output_tokens"] = plan.output_tokens;
    json["exclude"] = nlohmann::ordered_json::array();
    for (const auto& rule : plan.exclude) {
        nlohmann::ordered_json r = nlohmann::ordered_json::object();
        if (rule.model) r["model"] = *rule.model;
        if (rule.backend) r["backend"] = *rule.backend;
        if (rule.device) r["device"] = to_string(*rule.device);
        if (rule.precision) r["precision"] = to_string(*rule.precision);
        if (rule.batch_size) r["batch_size"] = *rule.batch_size;
        if (rule.input_tokens) r["input_tokens"] = *rule.input_tokens;
        if (rule.output_tokens) r["output_tokens"] = *rule.output_tokens;
        json["exclude"].push_back(r);
    }
    json["backend_options"] = plan.backend_options;
    if (!plan.cpu_affinity.empty()) json["cpu_affinity"] = cpu_affinity_texts(plan.cpu_affinity);
    for (const auto& field : setting_fields()) json[std::string(field.key)] = setting_text(plan.settings, field);
    if (plan.pipeline.active()) json[std::string(kPipelineKey)] = pipeline_plan_texts(plan.pipeline);
    for (const SettingAxis& axis : plan.setting_axes) {
        auto& values = json[axis.key] = nlohmann::ordered_json::array();
        for (const RunSettings& value : axis.values) values.push_back(setting_text(value, *find_setting(axis.key)));
    }
    return json.dump();
}

Plan plan_from_json(std::string_view json_text, std::string_view origin, const PlanVocabulary& vocabulary) {
    auto json = nlohmann::ordered_json::parse(json_text, nullptr, false);
    if (!json.is_object()) throw UserError(fmt::format("{}: the stored plan is not a JSON object", origin));
    const std::string source = json.value("source", std::string(origin));
    json.erase("source");
    // JSON is YAML's flow style: the plan parser reads it with every check a plan file gets.
    Plan plan = parse_plan(json.dump(), origin, vocabulary);
    plan.source = source;
    return plan;
}

std::optional<std::int64_t> parse_token_count(std::string_view text) {
    const auto tokens = parse_int(text);
    if (!tokens || *tokens < 1 || *tokens > kMaxGenerationTokens) return std::nullopt;
    return tokens;
}

std::optional<std::int64_t> parse_batch_size(std::string_view text) {
    const auto batch = parse_int(text);
    if (batch && *batch >= 1 && *batch <= kMaxBatchSize) return batch;
    return std::nullopt;
}

}  // namespace inferbench
