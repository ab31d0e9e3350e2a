#include "backends/tensorflow/tensorflow_api.hpp"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace inferbench {
namespace {

struct TypeName {
    TF_DataType type;
    std::string_view name;
    std::optional<DType> dtype;  // nothing: inferbench cannot feed it
};

constexpr TypeName kTypes[] = {
    {TF_FLOAT, "float", DType::f32},       {TF_HALF, "half", DType::f16},        {TF_BFLOAT16, "bfloat16", DType::bf16},
    {TF_DOUBLE, "double", DType::f64},     {TF_INT8, "int8", DType::i8},         {TF_UINT8, "uint8", DType::u8},
    {TF_INT32, "int32", DType::i32},       {TF_INT64, "int64", DType::i64},      {TF_BOOL, "bool", DType::boolean},
    {TF_STRING, "string", std::nullopt},   {TF_INT16, "int16", std::nullopt},    {TF_UINT16, "uint16", std::nullopt},
    {TF_UINT32, "uint32", std::nullopt},   {TF_UINT64, "uint64", std::nullopt},  {TF_COMPLEX64, "complex64", std::nullopt},
    {TF_RESOURCE, "resource", std::nullopt}, {TF_VARIANT, "variant", std::nullopt},
};

constexpr std::pair<TF_Code, std::string_view> kCodes[] = {
    {TF_CANCELLED, "CANCELLED"},          {TF_UNKNOWN, "UNKNOWN"},
    {TF_INVALID_ARGUMENT, "INVALID_ARGUMENT"}, {TF_DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED"},
    {TF_NOT_FOUND, "NOT_FOUND"},          {TF_ALREADY_EXISTS, "ALREADY_EXISTS"},
    {TF_PERMISSION_DENIED, "PERMISSION_DENIED"}, {TF_UNAUTHENTICATED, "UNAUTHENTICATED"},
    {TF_RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED"}, {TF_FAILED_PRECONDITION, "FAILED_PRECONDITION"},
    {TF_ABORTED, "ABORTED"},              {TF_OUT_OF_RANGE, "OUT_OF_RANGE"},
    {TF_UNIMPLEMENTED, "UNIMPLEMENTED"},  {TF_INTERNAL, "INTERNAL"},
    {TF_UNAVAILABLE, "UNAVAILABLE"},      {TF_DATA_LOSS, "DATA_LOSS"},
};

}  // namespace

void TfSessionDeleter::operator()(TF_Session* session) const noexcept {
    TF_Status* status = TF_NewStatus();
    TF_CloseSession(session, status);
    TF_DeleteSession(session, status);
    TF_DeleteStatus(status);
}

TfStatus::TfStatus() : status_(TF_NewStatus()) {
    if (!status_) throw std::bad_alloc();
}

std::string TfStatus::message() const {
    const TF_Code code = TF_GetCode(status_.get());
    std::string_view name = "error";
    for (const auto& [c, n] : kCodes) {
        if (c == code) name = n;
    }
    return fmt::format("{}: {}", name, TF_Message(status_.get()));
}

void TfStatus::check(std::string_view what) const {
    if (!ok()) throw std::runtime_error(fmt::format("{}: {}", what, message()));
}

std::optional<DType> to_dtype(TF_DataType type) {
    for (const TypeName& t : kTypes) {
        if (t.type == type) return t.dtype;
    }
    return std::nullopt;
}

TF_DataType to_tf_type(DType dtype) {
    for (const TypeName& t : kTypes) {
        if (t.dtype == dtype) return t.type;
    }
    throw std::logic_error("every DType has a TF_DataType");
}

std::string data_type_name(TF_DataType type) {
    for (const TypeName& t : kTypes) {
        if (t.type == type) return std::string(t.name);
    }
    return fmt::format("TF_DataType {}", static_cast<int>(type));
}

}  // namespace inferbench
