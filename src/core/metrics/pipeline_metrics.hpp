// Names of the figures an image pipeline cell (runner/worker/pipeline_cell) stores beside its stages
// (benchmark_metrics rows): the images it fed and those it left out, so that a throughput is read against the
// images it was made of.
#pragma once

#include <string_view>

namespace inferbench::pipeline_metrics {

// The images the cell's batches cycled through (unit "count"), each decoded once before timing.
inline constexpr std::string_view kImages = "pipeline_images";
// Files left out before timing (unit "count"): not an image, unreadable, a header over the limits, or data that
// does not decode; each named on one line of the worker's output.
inline constexpr std::string_view kImagesSkipped = "pipeline_images_skipped";
// The CPU stages' worker threads and, overlapped, the batches queued between two stages at most (unit "count").
inline constexpr std::string_view kThreads = "pipeline_threads";
inline constexpr std::string_view kQueueDepth = "pipeline_queue_depth";

}  // namespace inferbench::pipeline_metrics
