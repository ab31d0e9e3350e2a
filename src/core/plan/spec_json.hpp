// BenchmarkSpec <-> JSON, used to hand a cell to its worker process and to store its settings.
#pragma once

#include <nlohmann/json.hpp>

#include "core/spec.hpp"

namespace inferbench {

nlohmann::json spec_to_json(const BenchmarkSpec& spec);
// Throws std::runtime_error on malformed input (it comes from our own orchestrator).
BenchmarkSpec spec_from_json(const nlohmann::json& json);
// The scenario settings of a stored spec (its "scenario" object); the defaults (single_stream) where it
// has none, as cells stored before scenarios existed. Throws std::runtime_error on an unknown scenario.
ScenarioSettings scenario_from_json(const nlohmann::json& json);

// The measure conditions a cell stored beside its other keys (throttle_threshold, throttle_policy,
// l2_flush, sync); nullopt where it stored none (cells stored before they existed, imported logs).
// Throws std::runtime_error for a value no inferbench writes.
std::optional<MeasureConditions> conditions_from_json(const nlohmann::json& json);

}  // namespace inferbench
