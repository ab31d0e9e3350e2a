// Tensor data that ONNX files keep outside the model (TensorProto.external_data): PyTorch's exporter
// writes weights to MODEL.onnx.data by default from 2.9 on, and any model over 2 GB must do so.
#pragma once

#include <filesystem>
#include <string_view>

#include "models/onnx_reader.hpp"

namespace inferbench::models::onnx {

// Reads into `raw` the data of every tensor of `model` kept in an external file (initializers and
// tensor attributes, e.g. of Constant nodes), from files in `folder`, the model's own. A location
// must be a relative path that stays inside `folder` (no "..", no absolute path, no link out of it),
// name a regular file, and its range must lie in that file and be exactly the tensor's size.
// Throws UserError "SOURCE: tensor 'NAME': ..." otherwise.
void load_external_data(OnnxModel& model, const std::filesystem::path& folder, std::string_view source);

// Throws UserError if any tensor of `model` keeps its data in an external file: a model read from
// memory has no folder to find it in.
void reject_external_data(const OnnxModel& model, std::string_view source);

}  // namespace inferbench::models::onnx
