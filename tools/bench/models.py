"""The benchmark models, exported to ONNX from PyTorch: the six of issue 13
(compare_ort.sh's default set) and more torchvision models for a wider
sweep (`--models` names them; `--models all` runs every one).

    export_model(name, path, seed=0) -> writes path (ONNX, opset 13), returns
                                        the ModelSpec
    make_input(spec, seed=0)         -> {input name: numpy array}

Every model has random weights (torch.manual_seed(seed) before it is built),
batch 1, fp32, static shapes, and is exported in eval mode with constant
folding:

  resnet50, resnet18, mobilenet_v2, squeezenet1_1, efficientnet_b0
      torchvision 0.14 (Debian's python3-torchvision), input "input"
      float32 [1, 3, 224, 224], output "output" [1, 1000]; the BatchNorm
      statistics are those of random N(0, 1) images (_calibrate_batch_norm)
  bert   BERT-base with 4 encoder layers (hidden 768, 12 heads, FFN 3072,
      sequence 128, vocabulary 30522), written here in plain torch (torchvision
      has none): embeddings (word + position + token type, LayerNorm), then per
      layer self-attention (Q/K/V projections, scaled dot product, softmax,
      output projection, residual + LayerNorm) and a GELU (erf) feed-forward
      (residual + LayerNorm). Input "input_ids" int64 [1, 128] (token type 0,
      no attention mask: every token attends to every token); output
      "output" [1, 128, 768], the last hidden state. Weights are drawn like
      BERT's initializer (normal, std 0.02; LayerNorm 1 and 0).

The wider sweep (not in the default set), torchvision 0.14 like the image
models above, batch 1, BatchNorm calibrated the same way:
  regnet_x_400mf, regnet_y_400mf, resnext50_32x4d   grouped convolutions
  shufflenet_v2_x1_0                               58/116/232 channels, channel shuffle
  googlenet, inception_v3 (299 x 299)              branches, explicit-pad pools
  densenet121                                      long concatenations
  mnasnet1_0, mobilenet_v3_large                   depthwise, hardswish / SE
  convnext_tiny                                    7x7 depthwise, LayerNorm, [1, H, W, C] MLPs
  swin_t                                           windowed attention
  deeplabv3_mobilenet_v3_large, lraspp_mobilenet_v3_large (512 x 512)
                                                   segmentation: dilated convolutions
                                                   (ASPP), 16x / 8x bilinear upsampling;
                                                   output "output", the "out" head

Sequence, audio and generative models, written here in plain torch (random
weights, BatchNorm calibrated on random inputs of the model's shape):
  lstm2, gru2         2-layer LSTM / GRU, input 256, hidden 512, 64 steps:
                      input [64, 1, 256] (sequence-major), output the last
                      layer's hidden states [64, 1, 512]
  w2v2_encoder        wav2vec 2.0's convolutional feature encoder (512
                      channels, kernels 10/3/3/3/3/2/2, strides 5/2/2/2/2/2/2,
                      GroupNorm after the first, GELU) and its LayerNorm +
                      projection to 768: input [1, 1, 16000] (1 s of 16 kHz
                      audio), output [1, 49, 768]
  conv1d_asr          a Jasper-style Conv1d stack (BatchNorm + ReLU; 256-896
                      channels, kernels 11-29) over 80 mel bands x 400 frames
  dcgan               DCGAN's generator: ConvTranspose 4x4 (stride 1, then
                      stride 2) + BatchNorm + ReLU, tanh: noise [1, 100, 1, 1]
                      -> [1, 3, 64, 64]
  unet                a 4-level U-Net (32-256 channels, 3x3 conv + BN + ReLU
                      pairs, max pooling, 2x2 stride-2 ConvTranspose
                      up-convolutions, skip concatenations) on [1, 3, 256, 256]

torch is imported lazily: a run that finds its models cached never loads it.
"""
import math
from dataclasses import dataclass, field


@dataclass
class ModelSpec:
    name: str                 # the --models key
    title: str                # for tables
    inputs: dict = field(default_factory=dict)  # name -> (numpy dtype, shape)
    per_kernel: bool = False  # part of the per-kernel report by default
    default: bool = True      # in compare_ort.sh's default model set


IMAGE = {"input": ("float32", (1, 3, 224, 224))}
IMAGE_299 = {"input": ("float32", (1, 3, 299, 299))}
IMAGE_512 = {"input": ("float32", (1, 3, 512, 512))}
SEGMENTATION = ("deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large")
BERT_SEQ, BERT_HIDDEN, BERT_HEADS, BERT_FFN, BERT_LAYERS, BERT_VOCAB = 128, 768, 12, 3072, 4, 30522

SPECS = {
    "resnet50": ModelSpec("resnet50", "ResNet-50", IMAGE, per_kernel=True),
    "resnet18": ModelSpec("resnet18", "ResNet-18", IMAGE),
    "mobilenet_v2": ModelSpec("mobilenet_v2", "MobileNetV2", IMAGE),
    "squeezenet1_1": ModelSpec("squeezenet1_1", "SqueezeNet 1.1", IMAGE),
    "efficientnet_b0": ModelSpec("efficientnet_b0", "EfficientNet-B0", IMAGE),
    "bert": ModelSpec("bert", "BERT-base, 4 layers, seq 128",
                      {"input_ids": ("int64", (1, BERT_SEQ))}, per_kernel=True),
}
for _name, _title, _inputs in [
        ("regnet_x_400mf", "RegNetX-400MF", IMAGE),
        ("regnet_y_400mf", "RegNetY-400MF", IMAGE),
        ("resnext50_32x4d", "ResNeXt-50 32x4d", IMAGE),
        ("shufflenet_v2_x1_0", "ShuffleNetV2 1.0", IMAGE),
        ("googlenet", "GoogLeNet", IMAGE),
        ("inception_v3", "Inception-v3", IMAGE_299),
        ("densenet121", "DenseNet-121", IMAGE),
        ("mnasnet1_0", "MnasNet 1.0", IMAGE),
        ("mobilenet_v3_large", "MobileNetV3-Large", IMAGE),
        ("convnext_tiny", "ConvNeXt-T", IMAGE),
        ("swin_t", "Swin-T", IMAGE),
        ("deeplabv3_mobilenet_v3_large", "DeepLabV3-MobileNetV3-L", IMAGE_512),
        ("lraspp_mobilenet_v3_large", "LRASPP-MobileNetV3-L", IMAGE_512)]:
    SPECS[_name] = ModelSpec(_name, _title, _inputs, default=False)
PLAIN = {  # name -> (title, input shape): models.py's own torch modules
    "lstm2": ("LSTM, 2 layers, 64 steps", (64, 1, 256)),
    "gru2": ("GRU, 2 layers, 64 steps", (64, 1, 256)),
    "w2v2_encoder": ("wav2vec2 feature encoder (1 s)", (1, 1, 16000)),
    "conv1d_asr": ("Jasper-style Conv1d stack", (1, 80, 400)),
    "dcgan": ("DCGAN generator 64x64", (1, 100, 1, 1)),
    "unet": ("U-Net 256x256", (1, 3, 256, 256)),
}
for _name, (_title, _shape) in PLAIN.items():
    SPECS[_name] = ModelSpec(_name, _title, {"input": ("float32", _shape)}, default=False)
DEFAULT_MODELS = [n for n, s in SPECS.items() if s.default]


def make_input(spec, seed=0):
    """The benchmark input of `spec`: images N(0, 1), token ids uniform in
    [0, vocabulary); the same for every run with the same seed."""
    import numpy as np
    rng = np.random.default_rng(seed)
    out = {}
    for name, (dtype, shape) in spec.inputs.items():
        if dtype == "int64":
            out[name] = rng.integers(0, BERT_VOCAB, size=shape, dtype=np.int64)
        else:
            out[name] = rng.standard_normal(size=shape).astype(np.float32)
    return out


def _bert_module():
    import torch
    from torch import nn

    class Embeddings(nn.Module):
        def __init__(self):
            super().__init__()
            self.word = nn.Embedding(BERT_VOCAB, BERT_HIDDEN)
            self.position = nn.Embedding(512, BERT_HIDDEN)
            self.token_type = nn.Embedding(2, BERT_HIDDEN)
            self.norm = nn.LayerNorm(BERT_HIDDEN, eps=1e-12)
            self.register_buffer("position_ids", torch.arange(BERT_SEQ).unsqueeze(0))
            self.register_buffer("token_type_ids", torch.zeros(1, BERT_SEQ, dtype=torch.long))

        def forward(self, ids):
            x = self.word(ids) + self.position(self.position_ids)
            return self.norm(x + self.token_type(self.token_type_ids))

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
            self.k = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
            self.v = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
            self.out = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
            self.norm1 = nn.LayerNorm(BERT_HIDDEN, eps=1e-12)
            self.ffn_in = nn.Linear(BERT_HIDDEN, BERT_FFN)
            self.ffn_out = nn.Linear(BERT_FFN, BERT_HIDDEN)
            self.norm2 = nn.LayerNorm(BERT_HIDDEN, eps=1e-12)

        def heads(self, x):  # [1, S, H] -> [1, heads, S, H / heads]
            return x.view(1, BERT_SEQ, BERT_HEADS, BERT_HIDDEN // BERT_HEADS).transpose(1, 2)

        def forward(self, x):
            q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(BERT_HIDDEN // BERT_HEADS)
            ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
            ctx = ctx.transpose(1, 2).reshape(1, BERT_SEQ, BERT_HIDDEN)
            x = self.norm1(x + self.out(ctx))
            h = nn.functional.gelu(self.ffn_in(x))  # exact (erf) GELU
            return self.norm2(x + self.ffn_out(h))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.embeddings = Embeddings()
            self.layers = nn.ModuleList([Layer() for _ in range(BERT_LAYERS)])
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(m.weight, std=0.02)
                if isinstance(m, nn.Linear):
                    nn.init.normal_(m.bias, std=0.02)

        def forward(self, ids):
            x = self.embeddings(ids)
            for layer in self.layers:
                x = layer(x)
            return x

    return Bert()


def _plain_module(name):
    """The sequence, audio and generative models (PLAIN)."""
    import torch
    from torch import nn
    import torch.nn.functional as F

    class Recurrent(nn.Module):
        def __init__(self, cell):
            super().__init__()
            self.rnn = cell(256, 512, num_layers=2)

        def forward(self, x):
            return self.rnn(x)[0]

    class W2V2Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layers = [nn.Conv1d(1, 512, 10, 5, bias=False), nn.GroupNorm(512, 512), nn.GELU()]
            for k, st in [(3, 2)] * 4 + [(2, 2)] * 2:
                layers += [nn.Conv1d(512, 512, k, st, bias=False), nn.GELU()]
            self.conv = nn.Sequential(*layers)
            self.norm = nn.LayerNorm(512)
            self.proj = nn.Linear(512, 768)

        def forward(self, x):
            return self.proj(self.norm(self.conv(x).transpose(1, 2)))

    def conv1d_asr():
        layers, c = [], 80
        blocks = [(256, 11, 2)] + [(256, 11, 1)] * 3 + [(384, 13, 1)] * 3 + [(512, 17, 1)] * 3 + \
                 [(640, 21, 1)] * 3 + [(768, 25, 1)] * 3 + [(896, 29, 1), (1024, 1, 1)]
        for oc, k, st in blocks:
            layers += [nn.Conv1d(c, oc, k, st, padding=k // 2), nn.BatchNorm1d(oc), nn.ReLU()]
            c = oc
        return nn.Sequential(*layers, nn.Conv1d(c, 29, 1))

    def dcgan():
        layers, c = [nn.ConvTranspose2d(100, 512, 4, 1, 0, bias=False), nn.BatchNorm2d(512),
                     nn.ReLU()], 512
        for _ in range(3):
            layers += [nn.ConvTranspose2d(c, c // 2, 4, 2, 1, bias=False), nn.BatchNorm2d(c // 2),
                       nn.ReLU()]
            c //= 2
        return nn.Sequential(*layers, nn.ConvTranspose2d(c, 3, 4, 2, 1, bias=False), nn.Tanh())

    def conv_bn_relu(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self, c=32):
            super().__init__()
            self.down = nn.ModuleList(
                nn.Sequential(conv_bn_relu(3 if i == 0 else c << (i - 1), c << i),
                              conv_bn_relu(c << i, c << i)) for i in range(4))
            self.up = nn.ModuleList(nn.ConvTranspose2d(c << i, c << (i - 1), 2, 2)
                                    for i in range(3, 0, -1))
            self.dec = nn.ModuleList(
                nn.Sequential(conv_bn_relu(c << i, c << (i - 1)),
                              conv_bn_relu(c << (i - 1), c << (i - 1))) for i in range(3, 0, -1))
            self.head = nn.Conv2d(c, 2, 1)

        def forward(self, x):
            skips = []
            for i, d in enumerate(self.down):
                x = d(x)
                if i < 3:
                    skips.append(x)
                    x = F.max_pool2d(x, 2)
            for up, dec in zip(self.up, self.dec):
                x = dec(torch.cat([up(x), skips.pop()], 1))
            return self.head(x)

    build = {"lstm2": lambda: Recurrent(nn.LSTM), "gru2": lambda: Recurrent(nn.GRU),
             "w2v2_encoder": W2V2Encoder, "conv1d_asr": conv1d_asr, "dcgan": dcgan, "unet": UNet}
    return _calibrate_batch_norm(build[name](), shape=PLAIN[name][1])


def _torch_module(name):
    if name == "bert":
        return _bert_module()
    if name in PLAIN:
        return _plain_module(name)
    import torchvision
    size = SPECS[name].inputs["input"][1][-1]
    if name in SEGMENTATION:
        import torch
        net = getattr(torchvision.models.segmentation, name)(
            weights=None, weights_backbone=None, aux_loss=None)

        class OutHead(torch.nn.Module):  # the dict's "out" tensor
            def __init__(self):
                super().__init__()
                self.net = net

            def forward(self, x):
                return self.net(x)["out"]

        return _calibrate_batch_norm(OutHead(), size=size)
    kwargs = {}
    if name in ("googlenet", "inception_v3"):
        # No auxiliary classifiers (an exported model has the main output only).
        kwargs = {"aux_logits": False, "init_weights": True}
    return _calibrate_batch_norm(getattr(torchvision.models, name)(weights=None, **kwargs),
                                 size=size)


def _calibrate_batch_norm(module, batches=4, batch=8, size=224, shape=None):
    """Sets every BatchNorm's running mean and variance to the statistics of
    its input over a few random batches (train-mode forward passes), as
    training would: activations then keep about unit scale through the
    network. With the initial statistics (mean 0, variance 1) they shrink or
    grow layer after layer: MobileNetV2's outputs come out near 1e-9 and
    EfficientNet-B0's near 1e-14, which makes the error check meaningless and
    lets denormal numbers into the timings."""
    import torch
    from torch import nn
    norms = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return module
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average over the batches
    module.train()
    with torch.no_grad():
        for _ in range(batches):
            if shape is None:
                module(torch.randn(batch, 3, size, size))
            else:
                module(torch.randn(batch, *shape[1:]))
    return module


def export_model(name, path, seed=0):
    """Builds model `name` with random weights (seed) and writes it to `path`
    as ONNX (opset 13, static shapes); returns its ModelSpec."""
    import torch
    spec = SPECS[name]
    torch.manual_seed(seed)
    module = _torch_module(name).eval()
    example = tuple(torch.from_numpy(a) for a in make_input(spec, seed).values())
    with torch.no_grad():
        torch.onnx.export(module, example, path, opset_version=13,
                          input_names=list(spec.inputs), output_names=["output"],
                          do_constant_folding=True)
    return spec
