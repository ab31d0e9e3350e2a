#include "backends/torch/torch_tensors.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench {

torch::ScalarType to_torch(DType type) {
    switch (type) {
        case DType::f32:
            return torch::kFloat;
        case DType::f16:
            return torch::kHalf;
        case DType::bf16:
            return torch::kBFloat16;
        case DType::f64:
            return torch::kDouble;
        case DType::i8:
            return torch::kChar;
        case DType::u8:
            return torch::kByte;
        case DType::i32:
            return torch::kInt;
        case DType::i64:
            return torch::kLong;
        case DType::boolean:
            return torch::kBool;
    }
    return torch::kFloat;
}

DType from_torch(torch::ScalarType type) {
    for (const DType d : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8, DType::u8, DType::i32, DType::i64,
                          DType::boolean}) {
        if (to_torch(d) == type) return d;
    }
    throw UserError(fmt::format("an output of type {} has no inferbench element type", c10::toString(type)));
}

torch::Tensor to_torch_tensor(const HostTensor& tensor) {
    return torch::from_blob(const_cast<std::byte*>(tensor.data.data()), tensor.info.shape,
                            torch::TensorOptions().dtype(to_torch(tensor.info.dtype)))
        .clone();
}

std::vector<HostTensor> to_host_tensors(const std::vector<torch::Tensor>& outputs, const std::vector<std::string>& names) {
    std::vector<HostTensor> out;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const torch::Tensor t = outputs[i].to(torch::kCPU).contiguous();
        HostTensor& host = out.emplace_back();
        host.info = {i < names.size() ? names[i] : fmt::format("output{}", i), from_torch(t.scalar_type()),
                     t.sizes().vec()};
        const auto* bytes = static_cast<const std::byte*>(t.data_ptr());
        host.data.assign(bytes, bytes + host.info.byte_size());
    }
    return out;
}

}  // namespace inferbench
