// A plan's `pipeline:` map (core/pipeline's PipelineSettings as text): the one table of its keys that the plan
// parser, `--set pipeline.KEY=VALUE`, the stored plan and the stored spec read and write through. preprocess,
// postprocess and mode may be lists: sweep axes of the pipeline cells, like the batch sizes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/pipeline.hpp"

namespace inferbench {

// One key of `pipeline:` ("images", "threads", "steps.resize", ...): its help, whether a list sweeps it, and its
// reading (what is wrong, or nothing) and writing as text. A steps.* key gives the settings steps of their own.
struct PipelineKey {
    std::string_view key;
    std::string_view help;
    bool axis = false;
    std::optional<std::string> (*set)(PipelineSettings& settings, std::string_view text);
    std::string (*get)(const PipelineSettings& settings);
};

const std::vector<PipelineKey>& pipeline_keys();
const PipelineKey* find_pipeline_key(std::string_view key);
// "images, image_count, ..." for error messages.
std::string pipeline_key_names();

// The plan's pipeline: the settings (an axis holds its first value there) and the axes given as lists.
struct PipelinePlan {
    PipelineSettings settings;
    std::map<std::string, std::vector<std::string>, std::less<>> axes;  // key -> its values' texts, 2 or more

    bool active() const { return settings.active(); }
};

// Sets one key from its text, or its list (an axis key only); returns what is wrong, naming pipeline.KEY.
std::optional<std::string> set_pipeline_key(PipelinePlan& plan, std::string_view key,
                                            const std::vector<std::string>& values);

// Every pipeline cell's settings: the product of the axes, in the order of pipeline_keys(). One inactive
// settings where the plan has no pipeline.
std::vector<PipelineSettings> pipeline_points(const PipelinePlan& plan);

// Every key's text (the axes' as lists), for the stored plan: what set_pipeline_key reads back.
std::map<std::string, std::vector<std::string>> pipeline_plan_texts(const PipelinePlan& plan);
// One cell's settings as key -> text (steps.* only where it has steps), and back; from_texts throws
// std::runtime_error on a value it cannot read (a stored spec is written by this code).
std::map<std::string, std::string> pipeline_texts(const PipelineSettings& settings);
PipelineSettings pipeline_from_texts(const std::map<std::string, std::string>& texts);

}  // namespace inferbench
