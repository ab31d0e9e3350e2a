// The zoo's graph builders, one per architecture (one .cpp each). Internal to the models module;
// public only so that tests can inspect a graph without writing it.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "models/onnx_builder.hpp"
#include "models/zoo.hpp"

namespace inferbench::models {

// The symbolic batch dimension every zoo model's inputs and outputs carry.
inline constexpr std::string_view kBatchDimName = "batch";

// The published input sizes, the builders' defaults. The convolutional builders take any other
// size their layers fit (std::logic_error otherwise); their channels and weights do not change.
inline constexpr std::int64_t kImageNetImageSize = 224;
inline constexpr std::int64_t kSsdMobilenetImageSize = 300;
inline constexpr std::int64_t kSsdResnet34ImageSize = 1200;
inline constexpr std::int64_t kUnet3dVolume = 128;

// Throws std::logic_error unless `size` is a multiple of `multiple` and at least `minimum`.
void check_input_size(std::string_view model, std::int64_t size, std::int64_t minimum, std::int64_t multiple = 1);

GraphBuilder build_resnet50(std::uint64_t seed, std::int64_t image_size = kImageNetImageSize);
GraphBuilder build_mobilenet(std::uint64_t seed, std::int64_t image_size = kImageNetImageSize);

// Convolution -> BN (epsilon 0.001) -> ReLU6, the unit every MobileNet v1 layer is made of.
std::string mobilenet_v1_unit(GraphBuilder& g, const std::string& scope, const std::string& x, std::int64_t in_channels,
                          std::int64_t out_channels, const ConvOptions& options);
// MobileNet v1's feature extractor (Conv2d_0 and the 13 separable blocks, TF-slim scope names
// under `scope`), shared by the classifier and SSD-MobileNet.
struct MobilenetV1Features {
    std::vector<std::string> block_outputs;  // Conv2d_1 ... Conv2d_13 pointwise outputs
    std::int64_t channels = 0;               // of the last block
};
MobilenetV1Features mobilenet_v1_features(GraphBuilder& g, const std::string& input, const std::string& scope);
GraphBuilder build_mobilenet_v2(std::uint64_t seed, std::int64_t image_size = kImageNetImageSize);
// Detectors and segmenters end at their raw predictions: no box decoding, no NMS.
GraphBuilder build_ssd_mobilenet(std::uint64_t seed, std::int64_t image_size = kSsdMobilenetImageSize);
// At least 385 pixels: below, the last additional block (3x3, no padding) gets less than 3x3.
GraphBuilder build_ssd_resnet34(std::uint64_t seed, std::int64_t image_size = kSsdResnet34ImageSize);
// `volume`: the side of the cubic input, a multiple of 32 (5 stride-2 stages, undone by the decoder).
GraphBuilder build_unet3d(std::uint64_t seed, std::int64_t volume = kUnet3dVolume);

// BERT's dimensions (Devlin et al. 2018, arXiv:1810.04805); the defaults are the uncased
// checkpoints' vocabulary and tables, and MLPerf Inference's SQuAD sequence length.
struct BertConfig {
    std::int64_t layers = 0;
    std::int64_t hidden = 0;
    std::int64_t heads = 0;
    std::int64_t intermediate = 0;
    std::int64_t vocab = 30522;
    std::int64_t max_positions = 512;
    std::int64_t type_vocab = 2;
    std::int64_t sequence_length = 384;
};
inline constexpr BertConfig kBertLarge{.layers = 24, .hidden = 1024, .heads = 16, .intermediate = 4096};
inline constexpr BertConfig kBertBase{.layers = 12, .hidden = 768, .heads = 12, .intermediate = 3072};

// BERT with the SQuAD span head (BertForQuestionAnswering), opset 17. Throws std::logic_error
// for a config whose heads do not divide the width or whose sequence outgrows the position table.
GraphBuilder build_bert(const BertConfig& config, std::uint64_t seed);
GraphBuilder build_bert_large(std::uint64_t seed);
GraphBuilder build_bert_base(std::uint64_t seed);
// The parameters build_bert() creates, computed without creating them (bert-large is 1.3 GB).
std::int64_t bert_parameter_count(const BertConfig& config);

// YOLO detectors end at their head convolutions' raw outputs, [batch, 255, h, w] per scale:
// 3 anchors x (80 COCO classes + 4 box + 1 objectness). No decoding, no NMS.
inline constexpr std::int64_t kYoloOutputChannels = 3 * (80 + 5);

// YOLOv3 (Darknet-53 + 3-scale head) at image_size x image_size; throws std::logic_error unless
// the size is a multiple of 32.
GraphBuilder build_yolov3(std::int64_t image_size, std::uint64_t seed);
GraphBuilder build_yolov3_416(std::uint64_t seed);
GraphBuilder build_yolov3_608(std::uint64_t seed);

// ultralytics YOLOv5 v6.x/v7.0 model scaling (the yaml's depth_multiple and width_multiple).
struct YoloV5Config {
    double depth_multiple = 1.0;
    double width_multiple = 1.0;
    std::int64_t image_size = 640;
};
inline constexpr YoloV5Config kYoloV5s{.depth_multiple = 0.33, .width_multiple = 0.50};
inline constexpr YoloV5Config kYoloV5m{.depth_multiple = 0.67, .width_multiple = 0.75};
inline constexpr YoloV5Config kYoloV5l{.depth_multiple = 1.0, .width_multiple = 1.0};
inline constexpr YoloV5Config kYoloV5x{.depth_multiple = 1.33, .width_multiple = 1.25};
GraphBuilder build_yolov5(const YoloV5Config& config, std::uint64_t seed);
GraphBuilder build_yolov5s(std::uint64_t seed);
GraphBuilder build_yolov5m(std::uint64_t seed);
GraphBuilder build_yolov5l(std::uint64_t seed);
GraphBuilder build_yolov5x(std::uint64_t seed);

// Swin Transformer's dimensions (Liu et al. 2021, arXiv:2103.14030); stage s has embed_dim * 2^s
// channels. The defaults are the ImageNet-1k 224x224, window 7, patch 4 models.
struct SwinConfig {
    std::int64_t embed_dim = 0;
    std::array<std::int64_t, 4> depths{};
    std::array<std::int64_t, 4> heads{};
    std::int64_t window = 7;
    std::int64_t patch_size = 4;
    std::int64_t image_size = 224;
    std::int64_t classes = 1000;
};
inline constexpr SwinConfig kSwinT{.embed_dim = 96, .depths = {2, 2, 6, 2}, .heads = {3, 6, 12, 24}};
inline constexpr SwinConfig kSwinS{.embed_dim = 96, .depths = {2, 2, 18, 2}, .heads = {3, 6, 12, 24}};
inline constexpr SwinConfig kSwinB{.embed_dim = 128, .depths = {2, 2, 18, 2}, .heads = {4, 8, 16, 32}};
inline constexpr SwinConfig kSwinL{.embed_dim = 192, .depths = {2, 2, 18, 2}, .heads = {6, 12, 24, 48}};
// Opset 17 (LayerNormalization). Throws std::logic_error for a config whose heads do not divide a
// stage's width or whose stages do not tile into windows.
GraphBuilder build_swin(const SwinConfig& config, std::uint64_t seed);
GraphBuilder build_swin_t(std::uint64_t seed);
GraphBuilder build_swin_s(std::uint64_t seed);
GraphBuilder build_swin_b(std::uint64_t seed);
GraphBuilder build_swin_l(std::uint64_t seed);
// The parameters build_swin() creates, computed without creating them (swin-l is 786 MB).
std::int64_t swin_parameter_count(const SwinConfig& config);

// The graph export_onnx() writes for a zoo model: the architecture's graph plus provenance
// (producer version, doc string, metadata). Throws UserError for unknown names and for "null";
// std::logic_error for options the architecture cannot take (an image size for BERT, a size its
// layers do not fit).
GraphBuilder build_zoo_model(std::string_view name, std::uint64_t seed, const ZooOptions& options = {});

}  // namespace inferbench::models
