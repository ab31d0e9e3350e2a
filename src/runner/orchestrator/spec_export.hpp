// A PyTorch model spec (core/plan/model_spec) for a backend that reads files rather than specs (torch: ONNX or
// TorchScript, onnxruntime: ONNX): runners/torch_export.py makes the file, cached by the spec, the PyTorch
// version and the export's settings, before the cell's worker starts. fp32 with a dynamic batch for ONNX
// (the backends convert precisions themselves), the cell's batch for TorchScript (traced).
#pragma once

#include <optional>
#include <string>

#include "core/spec.hpp"

namespace inferbench::runner {

struct SpecExport {
    std::string model_path;                  // the file made (or found in the cache)
    std::optional<std::string> skip_reason;  // this PyTorch cannot make it (torch_export.py's exit 3)
    std::optional<std::string> failure;      // bad input or a failed export: one line, what and how to fix
    std::string output_tail;                 // the Python traceback's last lines, stored with the benchmark
};

// `format`: "onnx" or "torchscript". The interpreters tried: python3 on PATH, then /usr/bin/python3 (the next
// one where PyTorch is not importable); the cell's timeout bounds the export.
SpecExport export_model_spec(const BenchmarkSpec& spec, const std::string& format);

}  // namespace inferbench::runner
