"""inferbench's zoo BERT (src/models/zoo_bert.cpp: HuggingFace's BertForQuestionAnswering, MLPerf's BERT) and
3D U-Net (zoo_unet3d.cpp: MLPerf's KiTS19 3d-unet) as nn.Modules, layer for layer as the ONNX zoo builds
them. Module names are the ONNX zoo's tensor names (the references' state_dict names); the ONNX zoo stores
BERT's Linear weights [in, out] for MatMul, nn.Linear keeps [out, in] (onnx_linear_transposed).
"""

import math

import torch
from torch import nn
from torch.nn import functional as F

BERT_VOCAB = 30522
BERT_MAX_POSITIONS = 512
BERT_TYPE_VOCAB = 2
BERT_LAYER_NORM_EPSILON = 1e-12
BERT_MASKED_SCORE = -10000.0
BERT_LARGE = {"layers": 24, "hidden": 1024, "heads": 16, "intermediate": 4096}
BERT_BASE = {"layers": 12, "hidden": 768, "heads": 12, "intermediate": 3072}

UNET3D_FILTERS = (32, 64, 128, 256, 320, 320)
UNET3D_CLASSES = 3
UNET3D_LEAKY_SLOPE = 0.01
UNET3D_NORM_EPSILON = 1e-5


class BertEmbeddings(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.word_embeddings = nn.Embedding(BERT_VOCAB, hidden)
        self.position_embeddings = nn.Embedding(BERT_MAX_POSITIONS, hidden)
        self.token_type_embeddings = nn.Embedding(BERT_TYPE_VOCAB, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=BERT_LAYER_NORM_EPSILON)  # pylint: disable=invalid-name

    def forward(self, input_ids, token_type_ids):
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        return self.LayerNorm(x + self.position_embeddings(positions))


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def split(self, x):
        batch, sequence, hidden = x.shape
        return x.reshape(batch, sequence, self.heads, hidden // self.heads).transpose(1, 2)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + mask
        context = torch.softmax(scores, dim=-1) @ v
        return context.transpose(1, 2).reshape(x.shape)


class DenseNorm(nn.Module):
    """Linear, the residual added, LayerNorm: BERT's attention.output and output."""

    def __init__(self, in_features, hidden):
        super().__init__()
        self.dense = nn.Linear(in_features, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=BERT_LAYER_NORM_EPSILON)  # pylint: disable=invalid-name

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.attention = nn.Module()
        self.attention.self = BertSelfAttention(hidden, heads)
        self.attention.output = DenseNorm(hidden, hidden)
        self.intermediate = nn.Module()
        self.intermediate.dense = nn.Linear(hidden, intermediate)
        self.output = DenseNorm(intermediate, hidden)

    def forward(self, x, mask):
        x = self.attention.output(self.attention.self(x, mask), x)
        return self.output(F.gelu(self.intermediate.dense(x)), x)  # erf GELU, as the zoo's graph


class Bert(nn.Module):
    """BERT with the SQuAD span head: inputs input_ids, attention_mask, token_type_ids [N, seq] (int64);
    outputs start_logits and end_logits [N, seq]."""

    onnx_linear_transposed = True

    def __init__(self, layers, hidden, heads, intermediate):
        super().__init__()
        self.bert = nn.Module()
        self.bert.embeddings = BertEmbeddings(hidden)
        self.bert.encoder = nn.Module()
        self.bert.encoder.layer = nn.ModuleList(BertLayer(hidden, heads, intermediate) for _ in range(layers))
        self.qa_outputs = nn.Linear(hidden, 2)

    def forward(self, input_ids, attention_mask, token_type_ids):
        mask = (1.0 - attention_mask[:, None, None, :].to(self.qa_outputs.weight.dtype)) * BERT_MASKED_SCORE
        x = self.bert.embeddings(input_ids, token_type_ids)
        for layer in self.bert.encoder.layer:
            x = layer(x, mask)
        start, end = self.qa_outputs(x).split(1, dim=-1)
        return start.squeeze(-1), end.squeeze(-1)


def conv_block(in_channels, out_channels, stride):
    """Conv3d (3x3x3, no bias) -> InstanceNorm3d (affine) -> LeakyReLU(0.01)."""
    return nn.Sequential(nn.Conv3d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
                         nn.InstanceNorm3d(out_channels, eps=UNET3D_NORM_EPSILON, affine=True),
                         nn.LeakyReLU(UNET3D_LEAKY_SLOPE))


class DoubleBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.conv1 = conv_block(in_channels, out_channels, stride)
        self.conv2 = conv_block(out_channels, out_channels, 1)

    def forward(self, x):
        return self.conv2(self.conv1(x))


class UpsampleBlock(nn.Module):
    """ConvTranspose3d (2x2x2, stride 2) -> concatenation with the encoder's skip -> two blocks."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.upsample_conv = nn.Sequential(nn.ConvTranspose3d(in_channels, out_channels, 2, stride=2))
        self.conv1 = conv_block(2 * out_channels, out_channels, 1)
        self.conv2 = conv_block(out_channels, out_channels, 1)

    def forward(self, x, skip):
        return self.conv2(self.conv1(torch.cat([self.upsample_conv(x), skip], 1)))


class Unet3d(nn.Module):
    """The nnU-Net layout of MLPerf's KiTS19 model: input [N, 1, D, D, D] (D a multiple of 32), per-voxel
    logits [N, 3, D, D, D]."""

    def __init__(self):
        super().__init__()
        f = UNET3D_FILTERS
        self.input_block = DoubleBlock(1, f[0], 1)
        self.downsample = nn.ModuleList(DoubleBlock(f[i - 1], f[i], 2) for i in range(1, len(f) - 1))
        self.bottleneck = DoubleBlock(f[-2], f[-1], 2)
        self.upsample = nn.ModuleList(UpsampleBlock(f[i], f[i - 1]) for i in range(len(f) - 1, 0, -1))
        self.output = nn.Module()
        self.output.conv = nn.Conv3d(f[0], UNET3D_CLASSES, 1)

    def forward(self, x):
        skips = [self.input_block(x)]
        for block in self.downsample:
            skips.append(block(skips[-1]))
        x = self.bottleneck(skips[-1])
        for block, skip in zip(self.upsample, reversed(skips)):
            x = block(x, skip)
        return self.output.conv(x)
