#!/usr/bin/env python3
"""Writes the models and reference data of tests/dynamic_models (issue 14).

Not run by the tests or by CI: it documents how the committed files were
made. It needs PyTorch, NumPy and onnx, e.g. in a virtual environment
outside the repository:

    python3 -m venv ~/.cache/kiln/torch-venv
    ~/.cache/kiln/torch-venv/bin/pip install torch numpy onnx
    ~/.cache/kiln/torch-venv/bin/python tests/dynamic_models/make_models.py

Three models, exported with torch.onnx.export (the TorchScript exporter,
dynamo=False) and dynamic_axes, opset 14, eval mode, fixed seeds:

  gpt_tiny.onnx    a GPT-style decoder: token embedding + learned positions,
                   2 blocks of pre-norm causal multi-head self-attention
                   (4 heads, hidden 32) and a GELU MLP, a final layer norm and
                   an LM head over a vocabulary of 100. Inputs `tokens` and
                   `positions` (the position ids, as Hugging Face's GPT-2
                   takes them), both int64[batch, seq] with seq up to 16;
                   output `logits` float32[batch, seq, 100]. The heads are
                   split with split/stack, the attention products are einsums,
                   and the causal mask is built when the model runs from the
                   position ids (key j is hidden from query i when
                   positions[j] > positions[i]), so every tensor's shape is an
                   expression of batch and seq.
  gpt_tiny_nanogpt.onnx
                   the same decoder and weights written as nanoGPT does it:
                   input `tokens` only, positions = arange(seq), the heads
                   split with view(B, T, 4, 8), matmul, the mask from
                   arange(seq): its export has Shape, Gather, Range and
                   Reshape with run-time shapes (what kiln does not compile
                   yet: docs/vm.md, "Models exported from PyTorch").
  resnet_tiny.onnx a small ResNet: a 3x3 stem, three basic blocks (conv-bn-
                   relu-conv-bn + identity or a strided 1x1 projection),
                   global average pool, a linear layer to 10 classes. Input
                   `image` float32[batch, 3, 32, 32], output `logits`
                   float32[batch, 10]. BatchNorms get random statistics (the
                   exporter folds them into the convolutions).

With --exporter dynamo --out DIR it writes the same models (same weights)
exported by torch.export instead (opset 18), and the same .npy files, to
DIR: `dynamic_models_test.sh KILN DIR gpt_tiny resnet_tiny` checks them.

For each of several shapes the inputs and PyTorch's outputs are saved as
.npy: gpt_tiny_b{B}_t{T}_{tokens,positions,logits,nanogpt_logits}.npy for
(B, T) in (1, 5), (2, 9), (3, 16) (positions are arange(T) in every row), and
resnet_tiny_b{B}_{image,logits}.npy for B in 1, 2, 5.
"""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OPSET = 14
GPT_SHAPES = [(1, 5), (2, 9), (3, 16)]
RESNET_BATCHES = [1, 2, 5]


class CausalSelfAttention(nn.Module):
    def __init__(self, hidden, heads, style):
        super().__init__()
        self.heads = heads
        self.style = style
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x, positions):
        b, t, c = x.size()
        hs = c // self.heads
        q, k, v = self.qkv(x).split(c, dim=2)
        if self.style == "nanogpt":
            # view into heads, matmul, the mask from arange(T).
            q = q.view(b, t, self.heads, hs).transpose(1, 2)  # (b, h, t, hs)
            k = k.view(b, t, self.heads, hs).transpose(1, 2)
            v = v.view(b, t, self.heads, hs).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            i = torch.arange(t, device=x.device)
            future = i.unsqueeze(0) > i.unsqueeze(1)  # (t, t): key after query
            att = att.masked_fill(future, float("-inf"))
            y = F.softmax(att, dim=-1) @ v  # (b, h, t, hs)
            y = y.transpose(1, 2).reshape(b, t, c)
        else:
            # heads split along the hidden axis and stacked (no reshape of
            # run-time dims), einsum, the mask from the position ids: key j
            # is hidden from query i when positions[j] > positions[i].
            def heads(z):
                return torch.stack(z.split(hs, dim=-1), dim=1)  # (b, h, t, hs)
            q, k, v = heads(q), heads(k), heads(v)
            att = torch.einsum("bhtd,bhsd->bhts", q, k) * (1.0 / math.sqrt(hs))
            future = (positions.unsqueeze(-1) < positions.unsqueeze(-2)).unsqueeze(1)
            att = att.masked_fill(future, float("-inf"))
            y = torch.einsum("bhts,bhsd->bhtd", F.softmax(att, dim=-1), v)
            y = torch.cat(y.unbind(1), dim=-1)  # (b, t, c)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, hidden, heads, style):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = CausalSelfAttention(hidden, heads, style)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.out = nn.Linear(4 * hidden, hidden)

    def forward(self, x, positions):
        x = x + self.attn(self.ln1(x), positions)
        x = x + self.out(F.gelu(self.fc(self.ln2(x))))
        return x


class TinyGPT(nn.Module):
    """style "positions": forward(tokens, positions); "nanogpt": forward(tokens)."""

    def __init__(self, style, vocab=100, hidden=32, heads=4, layers=2, max_seq=16):
        super().__init__()
        self.style = style
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_seq, hidden)
        self.blocks = nn.ModuleList([Block(hidden, heads, style) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, tokens, positions=None):
        if self.style == "nanogpt":
            positions = torch.arange(tokens.size(1), device=tokens.device)
        x = self.tok(tokens) + self.pos(positions)
        for blk in self.blocks:
            x = blk(x, positions)
        return self.head(self.ln_f(x))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class TinyResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU())
        self.layers = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 16, 2),
                                    BasicBlock(16, 16, 2))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, classes)

    def forward(self, image):
        x = self.layers(self.stem(image))
        return self.fc(torch.flatten(self.pool(x), 1))


def randomize_batch_norms(model, gen):
    # Fresh BatchNorms are the identity in eval mode; give them statistics so
    # the test sees them.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)


EXPORTER = "torchscript"


def export(model, example, path, input_names, dynamic):
    if EXPORTER == "dynamo":
        # torch.export's exporter (PyTorch's default since 2.9; needs
        # onnxscript): the dynamic axes as torch.export.Dim, opset 18.
        dims = {}
        shapes = {n: {axis: dims.setdefault(name, torch.export.Dim(name, min=1, max=64))
                      for axis, name in dynamic[n].items()} for n in input_names}
        prog = torch.onnx.export(model, example, dynamo=True, dynamic_shapes=shapes,
                                 input_names=input_names, output_names=["logits"],
                                 opset_version=18)
        prog.save(path)
        return
    torch.onnx.export(model, example, path, input_names=input_names, output_names=["logits"],
                      dynamic_axes=dynamic, opset_version=OPSET, do_constant_folding=True,
                      dynamo=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript",
                    help="dynamo: export with torch.export instead (same models, weights and "
                    ".npy files; not what is committed)")
    args = ap.parse_args()
    global EXPORTER
    EXPORTER = args.exporter
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)

    gpt = TinyGPT("positions").eval()
    nano = TinyGPT("nanogpt").eval()
    nano.load_state_dict(gpt.state_dict())  # the same weights
    seq = {0: "batch", 1: "seq"}
    with torch.no_grad():
        ex = torch.zeros(2, 7, dtype=torch.int64)
        export(gpt, (ex, torch.arange(7).repeat(2, 1)), os.path.join(args.out, "gpt_tiny.onnx"),
               ["tokens", "positions"], {"tokens": seq, "positions": seq, "logits": seq})
        export(nano, (ex,), os.path.join(args.out, "gpt_tiny_nanogpt.onnx"), ["tokens"],
               {"tokens": seq, "logits": seq})
        for b, t in GPT_SHAPES:
            tokens = torch.randint(0, 100, (b, t), generator=gen)
            positions = torch.arange(t).repeat(b, 1)
            stem = os.path.join(args.out, f"gpt_tiny_b{b}_t{t}")
            np.save(stem + "_tokens.npy", tokens.numpy().astype(np.int64))
            np.save(stem + "_positions.npy", positions.numpy().astype(np.int64))
            np.save(stem + "_logits.npy", gpt(tokens, positions).numpy().astype(np.float32))
            np.save(stem + "_nanogpt_logits.npy", nano(tokens).numpy().astype(np.float32))

    resnet = TinyResNet()
    with torch.no_grad():
        randomize_batch_norms(resnet, gen)
    resnet.eval()
    with torch.no_grad():
        path = os.path.join(args.out, "resnet_tiny.onnx")
        export(resnet, (torch.zeros(2, 3, 32, 32),), path, ["image"],
               {"image": {0: "batch"}, "logits": {0: "batch"}})
        for b in RESNET_BATCHES:
            image = torch.randn(b, 3, 32, 32, generator=gen)
            logits = resnet(image)
            stem = os.path.join(args.out, f"resnet_tiny_b{b}")
            np.save(stem + "_image.npy", image.numpy().astype(np.float32))
            np.save(stem + "_logits.npy", logits.numpy().astype(np.float32))

    import onnx  # only to check what was written
    for name in ("gpt_tiny.onnx", "gpt_tiny_nanogpt.onnx", "resnet_tiny.onnx"):
        m = onnx.load(os.path.join(args.out, name))
        onnx.checker.check_model(m)
        ops = sorted({n.op_type for n in m.graph.node})
        print(f"{name}: opset {m.opset_import[0].version}, {len(m.graph.node)} nodes: "
              + ", ".join(ops))


if __name__ == "__main__":
    main()
