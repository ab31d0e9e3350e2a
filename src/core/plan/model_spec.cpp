#include "core/plan/model_spec.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

namespace inferbench {
namespace {

std::string_view library_of(std::string_view text) {
    const auto colon = text.find(':');
    return colon == std::string_view::npos ? std::string_view() : text.substr(0, colon);
}

bool is_identifier(std::string_view text) {
    if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front()))) return false;
    return std::ranges::all_of(text, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

constexpr std::string_view kHowToWrite =
    "write torchvision:NAME, timm:NAME, hf:NAME or python:PATH.py:FACTORY";

}  // namespace

bool is_model_spec(std::string_view text) {
    const std::string_view library = library_of(text);
    return std::ranges::find(kModelSpecLibraries, library) != std::end(kModelSpecLibraries);
}

bool is_served_model(std::string_view text) { return text.starts_with(kServedModelPrefix); }

std::string_view served_model_name(std::string_view text) {
    return is_served_model(text) ? text.substr(kServedModelPrefix.size()) : std::string_view();
}

bool looks_like_model_spec(std::string_view text) {
    const std::string_view library = library_of(text);
    return !library.empty() && library.find('/') == std::string_view::npos &&
           std::ranges::all_of(library, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::optional<std::string> model_spec_problem(std::string_view text) {
    const std::string_view library = library_of(text);
    if (!is_model_spec(text))
        return fmt::format("model '{}': unknown model library '{}'; {}", text, library, kHowToWrite);
    const std::string_view rest = text.substr(library.size() + 1);
    if (library != "python") {
        if (rest.empty()) return fmt::format("model '{}': the {} model name is missing; {}", text, library, kHowToWrite);
        return std::nullopt;
    }
    const auto colon = rest.rfind(':');
    const std::string_view path = colon == std::string_view::npos ? rest : rest.substr(0, colon);
    const std::string_view factory = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (!path.ends_with(".py") || !is_identifier(factory))
        return fmt::format("model '{}': write python:PATH.py:FACTORY (FACTORY a function returning the nn.Module "
                           "and example inputs)",
                           text);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(std::string(path), ec))
        return fmt::format("model '{}': the factory's file '{}' not found; give an existing .py file", text, path);
    return std::nullopt;
}

}  // namespace inferbench
