// The TensorFlow C API objects the backend uses, as owning handles, and TF_Status as an error.
#pragma once

#include <tensorflow/c/c_api.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backends/backend.hpp"

namespace inferbench {

template <auto destroy>
struct TfDeleter {
    template <typename T>
    void operator()(T* object) const noexcept {
        destroy(object);
    }
};

using TfGraph = std::unique_ptr<TF_Graph, TfDeleter<&TF_DeleteGraph>>;
using TfTensor = std::unique_ptr<TF_Tensor, TfDeleter<&TF_DeleteTensor>>;
using TfBuffer = std::unique_ptr<TF_Buffer, TfDeleter<&TF_DeleteBuffer>>;
using TfSessionOptions = std::unique_ptr<TF_SessionOptions, TfDeleter<&TF_DeleteSessionOptions>>;
using TfImportOptions = std::unique_ptr<TF_ImportGraphDefOptions, TfDeleter<&TF_DeleteImportGraphDefOptions>>;
using TfDeviceList = std::unique_ptr<TF_DeviceList, TfDeleter<&TF_DeleteDeviceList>>;

// Closes the session (its runs end) before deleting it, as TensorFlow asks.
struct TfSessionDeleter {
    void operator()(TF_Session* session) const noexcept;
};
using TfSession = std::unique_ptr<TF_Session, TfSessionDeleter>;

class TfStatus {
public:
    TfStatus();
    TF_Status* get() const { return status_.get(); }
    bool ok() const { return TF_GetCode(status_.get()) == TF_OK; }
    std::string message() const;  // "INVALID_ARGUMENT: Invalid GraphDef"
    // Throws runtime_error "<what>: <message>" unless ok().
    void check(std::string_view what) const;

private:
    std::unique_ptr<TF_Status, TfDeleter<&TF_DeleteStatus>> status_;
};

std::optional<DType> to_dtype(TF_DataType type);
TF_DataType to_tf_type(DType dtype);
std::string data_type_name(TF_DataType type);  // "float", "string", "TF_DataType 99"

}  // namespace inferbench
