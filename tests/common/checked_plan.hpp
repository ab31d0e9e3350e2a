// A plan read from YAML text and checked as `run` checks it, over a small vocabulary of zoo models and
// backends: for tests of the plan's settings.
#pragma once

#include <string>

#include "core/plan/plan.hpp"

namespace inferbench::testing {

inline const PlanVocabulary kPlanTestVocabulary{{"mobilenet", "resnet50", "null"}, {"onnxruntime", "null"}};

inline Plan checked_plan(const std::string& yaml) {
    Plan plan = parse_plan(yaml, "plan.yaml", kPlanTestVocabulary);
    check_plan(plan);
    return plan;
}

}  // namespace inferbench::testing
