// Reads ONNX files (ModelProto) into plain structs, without libprotobuf: the counterpart of
// onnx_builder.hpp, so backends that do not take ONNX themselves (LibTorch) can run the same
// files, weights included. Field numbers follow onnx/onnx.proto (ONNX 1.12 to 1.16).
//
// Built for untrusted files: malformed input is a UserError naming the file, what is wrong and the
// byte offset, never a crash or an allocation larger than the file. What a reader of plain structs
// cannot honour is an error too (sparse initializers; external tensor data when the model is read
// from memory rather than from its file), so a consumer never runs a model with silently missing
// weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

// The names (OnnxNode, OnnxValueInfo, ...) are those of the ONNX messages; onnx_builder.hpp's
// structs of the same names describe what the zoo writes, these what any file holds.
namespace inferbench::models::onnx {

// TensorProto.DataType. Values a newer ONNX adds can still be stored (the underlying int32).
enum class DataType : std::int32_t {
    undefined = 0,
    float32 = 1,
    uint8 = 2,
    int8 = 3,
    uint16 = 4,
    int16 = 5,
    int32 = 6,
    int64 = 7,
    string = 8,
    boolean = 9,
    float16 = 10,
    float64 = 11,
    uint32 = 12,
    uint64 = 13,
    complex64 = 14,
    complex128 = 15,
    bfloat16 = 16,
    float8e4m3fn = 17,
    float8e4m3fnuz = 18,
    float8e5m2 = 19,
    float8e5m2fnuz = 20,
    uint4 = 21,
    int4 = 22,
    float4e2m1 = 23,
};

std::string_view to_string(DataType type);  // "float32", ...; "unknown type" for values newer than this reader
// Bits per element; 0 for string, undefined and unknown types.
std::size_t element_bits(DataType type);

struct OnnxTensor {
    std::string name;
    DataType data_type = DataType::undefined;
    std::vector<std::int64_t> dims;  // empty: a scalar
    // The elements, little-endian, densely packed (4-bit types two per byte), whichever field the
    // file stored them in. Its size always matches dims and data_type (checked on reading).
    std::vector<std::byte> raw;
    std::vector<std::string> strings;  // DataType::string only

    // Where the file said the data lives when it keeps it outside the model (TensorProto.external_data:
    // PyTorch's exporter does so by default from 2.9 on). read_onnx_file() loads it into `raw` and
    // clears this; read_onnx() refuses such tensors.
    struct External {
        std::string location;     // relative to the model's folder
        std::int64_t offset = 0;  // bytes into that file
        std::int64_t length = -1;  // -1: what dims and data_type take
    };
    std::optional<External> external;

    std::int64_t element_count() const;
};

// An attribute's value. Kinds not listed (sparse tensors, type protos, tensor and graph lists) are
// left out of OnnxNode::attributes; graphs (the branches of If, the body of Loop) are in OnnxNode::subgraphs.
using OnnxAttributeValue = std::variant<std::int64_t, float, std::string, OnnxTensor, std::vector<std::int64_t>,
                                        std::vector<float>, std::vector<std::string>>;

struct OnnxGraph;

struct OnnxNode {
    std::string name;
    std::string op_type;
    std::string domain;                // empty: the default ai.onnx domain
    std::vector<std::string> inputs;   // an empty name: an optional input left out
    std::vector<std::string> outputs;  // an empty name: an optional output not wanted
    std::map<std::string, OnnxAttributeValue, std::less<>> attributes;
    // Attributes of type GRAPH by name ("then_branch", "else_branch", "body"); they may use the
    // names of the enclosing graphs.
    std::map<std::string, std::shared_ptr<const OnnxGraph>, std::less<>> subgraphs = {};
};

// A dimension: a fixed size, or a symbolic name such as "batch" (an empty name: unknown).
using OnnxDimension = std::variant<std::int64_t, std::string>;

struct OnnxValueInfo {
    std::string name;
    DataType elem_type = DataType::undefined;  // undefined also for non-tensor types (sequences, maps)
    bool has_shape = false;                    // false: rank unknown; true with no dims: a scalar
    std::vector<OnnxDimension> dims;
};

struct OnnxGraph {
    std::string name;
    std::vector<OnnxNode> nodes;
    std::vector<OnnxTensor> initializers;
    std::vector<OnnxValueInfo> inputs;  // may list initializers too (IR version < 4 did)
    std::vector<OnnxValueInfo> outputs;
    std::vector<OnnxValueInfo> value_info;
};

struct OpsetImport {
    std::string domain;  // empty: ai.onnx
    std::int64_t version = 0;
};

struct OnnxModel {
    std::int64_t ir_version = 0;
    std::vector<OpsetImport> opset_imports;
    std::string producer;
    std::string producer_version;
    std::string doc_string;
    OnnxGraph graph;
    std::map<std::string, std::string, std::less<>> metadata;

    // The imported version of `domain` ("" and "ai.onnx" are the same), or 0 if not imported.
    std::int64_t opset_version(std::string_view domain = "") const;
};

// A graph's interface: what a runner that builds the model itself (trtexec) needs to know.
struct OnnxGraphSignature {
    std::vector<OnnxValueInfo> inputs;  // without those that are initializers (IR version < 4 listed weights too)
    std::vector<OnnxValueInfo> outputs;
    // The initializers' names, types and dims, their data never decoded (`raw` stays empty): what a
    // reader of a decoder's shape needs from a file of billions of parameters.
    std::vector<OnnxTensor> initializers;
    std::map<std::string, std::string, std::less<>> metadata;  // ModelProto.metadata_props
};

// Throws UserError "SOURCE: not an ONNX model: <what> at byte N" for malformed data and
// "SOURCE: <what>" for valid ONNX that this reader cannot represent (sparse initializers, and external
// data: without the model's file there is no folder to find it in).
OnnxModel read_onnx(std::span<const std::byte> data, std::string_view source_name);
// The same for a file; a file that cannot be read is a UserError too. Tensors kept in external files
// are loaded from the model's folder (onnx_external_data.hpp says what is checked).
OnnxModel read_onnx_file(const std::filesystem::path& path);

// The graph's inputs and outputs only. Initializers and nodes are skipped, never decoded, and the
// file is mapped rather than read, so the weights' pages are not even loaded: a 100 MB model costs
// what its graph description costs. The same errors as read_onnx for what it reads.
OnnxGraphSignature read_onnx_signature(std::span<const std::byte> data, std::string_view source_name);
OnnxGraphSignature read_onnx_signature(const std::filesystem::path& path);

}  // namespace inferbench::models::onnx
