// libFuzzer entry point for the ONNX reader: any input must either decode into a model whose
// tensors are consistent with their dims, or be rejected with a UserError. Any other exception,
// a crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "core/error.hpp"
#include "models/onnx_reader.hpp"

namespace {

using inferbench::models::onnx::DataType;
using inferbench::models::onnx::OnnxTensor;

// The reader's promise to its consumers: raw holds exactly the elements the dims describe.
void check_tensor(const OnnxTensor& t) {
    const std::size_t bits = inferbench::models::onnx::element_bits(t.data_type);
    if (bits == 0) return;
    const auto count = static_cast<std::size_t>(t.element_count());
    if (t.element_count() < 0 || t.raw.size() != (count * bits + 7) / 8) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const auto model = inferbench::models::onnx::read_onnx(std::as_bytes(std::span(data, size)), "fuzz");
        for (const auto& tensor : model.graph.initializers) check_tensor(tensor);
        for (const auto& node : model.graph.nodes) {
            for (const auto& [name, value] : node.attributes) {
                if (const auto* tensor = std::get_if<OnnxTensor>(&value)) check_tensor(*tensor);
            }
        }
    } catch (const inferbench::UserError&) {
        // The expected outcome for almost every input.
    }
    return 0;
}
