#include "core/plan.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/error.hpp"
#include "core/text_checks.hpp"
#include "core/units.hpp"

namespace inferbench {
namespace {

[[noreturn]] void fail_at(std::string_view source, const YAML::Mark& mark, const std::string& what) {
    throw UserError(fmt::format("{}:{}:{}: {}", source, mark.line + 1, mark.column + 1, what));
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

// The form an axis compares values in: "cuda" and "cuda:0" are one device, "8" and "08" one batch size.
std::string axis_identity(std::string_view axis, const std::string& value) {
    if (const auto device = parse_device(value); axis == "devices" && device) return to_string(*device);
    if (const auto batch = parse_int(value); axis == "batch_sizes" && batch) return std::to_string(*batch);
    return value;
}

// The positions (first, repeat) of the first value listed twice, or nothing: a repeated value would
// measure the same cells twice.
std::optional<std::pair<std::size_t, std::size_t>> find_repeat(std::string_view axis,
                                                               const std::vector<std::string>& values) {
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < values.size(); ++i) {
        const auto [first, added] = seen.emplace(axis_identity(axis, values[i]), i);
        if (!added) return std::make_pair(first->second, i);
    }
    return std::nullopt;
}

std::string repeat_message(std::string_view list, const std::string& value) {
    return fmt::format("{} lists '{}' twice; list each value once", list, value);
}

void reject_repeats(std::string_view axis, std::string_view list,
                    const std::vector<std::pair<std::string, YAML::Mark>>& items, std::string_view source) {
    std::vector<std::string> values;
    for (const auto& item : items) values.push_back(item.first);
    const auto repeat = find_repeat(axis, values);
    if (!repeat) return;
    const YAML::Mark& first = items[repeat->first].second;
    fail_at(source, items[repeat->second].second,
            fmt::format("{} (first at {}:{})", repeat_message(list, values[repeat->second]), first.line + 1,
                        first.column + 1));
}

// Accepts a list of scalars, or one scalar as a list of one.
std::vector<std::pair<std::string, YAML::Mark>> scalar_list(const YAML::Node& node, std::string_view key,
                                                            std::string_view source) {
    std::vector<std::pair<std::string, YAML::Mark>> items;
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

void assign_axis(Plan& plan, std::string_view axis, const std::vector<std::string>& values) {
    if (axis == "models") plan.models = values;
    else if (axis == "backends") plan.backends = values;
    else if (axis == "devices") plan.devices = values;
    else if (axis == "precisions") plan.precisions = values;
    else {
        plan.batch_sizes.clear();
        for (const auto& v : values) plan.batch_sizes.push_back(*parse_int(v));
    }
}

void parse_axis(Plan& plan, std::string_view axis, const YAML::Node& node, std::string_view source,
                const PlanVocabulary& vocabulary) {
    std::vector<std::string> values;
    const auto items = scalar_list(node, axis, source);
    for (const auto& [value, mark] : items) {
        if (auto why = check_axis_value(axis, value, vocabulary)) fail_at(source, mark, *why);
        values.push_back(value);
    }
    reject_repeats(axis, axis, items, source);
    assign_axis(plan, axis, values);
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
        const std::string axis = key == "batch_size" ? "batch_sizes" : key + "s";
        if (!is_axis(axis)) {
            fail_at(source, entry.first.Mark(),
                    fmt::format("unknown exclude key '{}'; valid keys: model, backend, device, precision, batch_size",
                                key));
        }
        if (auto why = check_axis_value(axis, *value, vocabulary)) fail_at(source, entry.second.Mark(), *why);
        if (key == "model") rule.model = *value;
        else if (key == "backend") rule.backend = *value;
        else if (key == "device") rule.device = *value;
        else if (key == "precision") rule.precision = *value;
        else rule.batch_size = parse_int(*value);
    }
    return rule;
}

void parse_backend_options(Plan& plan, const YAML::Node& node, std::string_view source,
                           const PlanVocabulary& vocabulary) {
    if (!node.IsMap())
        fail_at(source, node.Mark(), "backend_options must map a backend to its options, e.g. onnxruntime: {threads: 2}");
    reject_duplicate_keys(node, source, "backend_options.");
    for (const auto& entry : node) {
        const std::string backend = scalar_text(entry.first).value_or("");
        if (auto why = check_axis_value("backends", backend, vocabulary)) fail_at(source, entry.first.Mark(), *why);
        if (!entry.second.IsMap())
            fail_at(source, entry.second.Mark(), fmt::format("backend_options.{} must be a map of options", backend));
        reject_duplicate_keys(entry.second, source, fmt::format("backend_options.{}.", backend));
        for (const auto& option : entry.second) {
            const std::string key = fmt::format("backend_options.{}.{}", backend, option.first.Scalar());
            auto& values = plan.backend_options[backend][option.first.Scalar()];
            values.clear();
            const auto items = scalar_list(option.second, key, source);
            for (const auto& [value, mark] : items) values.push_back(value);
            reject_repeats(key, key, items, source);
        }
    }
}

void parse_entry(Plan& plan, const std::string& key, const YAML::Node& key_node, const YAML::Node& value,
                 std::string_view source, const PlanVocabulary& vocabulary) {
    if (is_axis(key)) {
        parse_axis(plan, key, value, source, vocabulary);
    } else if (key == "exclude") {
        if (!value.IsSequence()) fail_at(source, value.Mark(), "exclude must be a list of rules");
        for (const auto& rule : value) plan.exclude.push_back(parse_exclude_rule(rule, source, vocabulary));
    } else if (key == "backend_options") {
        parse_backend_options(plan, value, source, vocabulary);
    } else if (const SettingField* field = find_setting(key)) {
        const auto text = scalar_text(value);
        if (!text) fail_at(source, value.Mark(), fmt::format("{} must be a single {}", key, type_name(field->type)));
        if (auto why = set_setting(plan.settings, *field, *text)) fail_at(source, value.Mark(), *why);
    } else {
        fail_at(source, key_node.Mark(),
                fmt::format("unknown key '{}'; valid keys: {}", key, join(setting_keys(), ", ")));
    }
}

}  // namespace

bool ExcludeRule::matches(const BenchmarkSpec& spec) const {
    return (!model || *model == spec.model) && (!backend || *backend == spec.backend) &&
           (!device || parse_device(*device) == spec.device) &&
           (!precision || *precision == to_string(spec.precision)) && (!batch_size || *batch_size == spec.batch_size);
}

std::optional<std::string> check_axis_value(std::string_view axis, std::string_view value,
                                            const PlanVocabulary& vocabulary) {
    if (axis == "models") {
        if (contains(vocabulary.models, value)) return std::nullopt;
        if (looks_like_path(value) || is_special_file(value)) return model_file_problem(value, vocabulary);
        return fmt::format("unknown model '{}'; valid choices: {}, or a path to a model file", value,
                           join(vocabulary.models, ", "));
    }
    if (axis == "backends") {
        if (contains(vocabulary.backends, value)) return std::nullopt;
        return fmt::format("unknown backend '{}'; valid choices: {}", value, join(vocabulary.backends, ", "));
    }
    if (axis == "devices") {
        if (parse_device(value)) return std::nullopt;
        return fmt::format("unknown device '{}'; valid choices: cpu, cuda, cuda:N", value);
    }
    if (axis == "precisions") {
        if (parse_precision(value)) return std::nullopt;
        return fmt::format("unknown precision '{}'; valid choices: {}", value, join(precision_names(), ", "));
    }
    const auto batch = parse_int(value);
    if (!batch || *batch < 1 || *batch > kMaxBatchSize)
        return fmt::format("batch size '{}' must be a whole number from 1 to {}", value, kMaxBatchSize);
    return std::nullopt;
}

Plan parse_plan(std::string_view yaml_text, std::string_view source, const PlanVocabulary& vocabulary) {
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
    if (is_axis(key)) {
        const auto axis = key;
        const auto values = split_list(value);
        for (const auto& item : values) {
            if (item.empty()) throw UserError(fmt::format("{}: empty item in the list", origin));
            if (auto why = check_axis_value(axis, item, vocabulary)) throw UserError(fmt::format("{}: {}", origin, *why));
        }
        if (const auto repeat = find_repeat(axis, values))
            throw UserError(fmt::format("{}: {}", origin, repeat_message(axis, values[repeat->second])));
        assign_axis(plan, axis, values);
        return;
    }
    if (key.starts_with("backend_options.")) {
        const std::string_view rest = key.substr(std::string_view("backend_options.").size());
        const auto dot = rest.find('.');
        if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size())
            throw UserError(fmt::format("{}: write backend_options.BACKEND.OPTION=VALUE[,VALUE...]", origin));
        const std::string backend(rest.substr(0, dot));
        if (auto why = check_axis_value("backends", backend, vocabulary)) throw UserError(fmt::format("{}: {}", origin, *why));
        const auto values = split_list(value);
        if (const auto repeat = find_repeat(key, values))
            throw UserError(fmt::format("{}: {}", origin, repeat_message(key, values[repeat->second])));
        plan.backend_options[backend][std::string(rest.substr(dot + 1))] = values;
        return;
    }
    const SettingField* field = find_setting(key);
    if (!field) {
        throw UserError(fmt::format("{}: unknown key '{}'; valid keys: {}", origin, key, join(setting_keys(), ", ")));
    }
    if (auto why = set_setting(plan.settings, *field, value)) throw UserError(fmt::format("{}: {}", origin, *why));
}

void check_plan(const Plan& plan) {
    const RunSettings& settings = plan.settings;
    if (settings.max_iterations != 0 && settings.min_iterations > settings.max_iterations)
        throw UserError(fmt::format("{}: min_iterations {} is above max_iterations {}; lower min_iterations or raise "
                                    "max_iterations (0: no limit)",
                                    plan.source, settings.min_iterations, settings.max_iterations));
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
    json["devices"] = plan.devices;
    json["precisions"] = plan.precisions;
    json["batch_sizes"] = plan.batch_sizes;
    json["exclude"] = nlohmann::ordered_json::array();
    for (const auto& rule : plan.exclude) {
        nlohmann::ordered_json r = nlohmann::ordered_json::object();
        if (rule.model) r["model"] = *rule.model;
        if (rule.backend) r["backend"] = *rule.backend;
        if (rule.device) r["device"] = *rule.device;
        if (rule.precision) r["precision"] = *rule.precision;
        if (rule.batch_size) r["batch_size"] = *rule.batch_size;
        json["exclude"].push_back(r);
    }
    json["backend_options"] = plan.backend_options;
    for (const auto& field : setting_fields()) json[std::string(field.key)] = setting_text(plan.settings, field);
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

}  // namespace inferbench
