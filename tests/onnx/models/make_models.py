#!/usr/bin/env python3
"""Builds small real-architecture ONNX models for kiln's end-to-end tests.

    make_models.py OUT_DIR

writes, for each model, the layout of ONNX's backend test data:

    OUT_DIR/<model>/model.onnx
    OUT_DIR/<model>/test_data_set_0/input_0.pb ...   (onnx.TensorProto)
    OUT_DIR/<model>/test_data_set_0/output_0.pb ...  (expected, computed here
                                                      with NumPy, independently
                                                      of kiln)

Models (random weights, fixed seeds):
  resnet_mini      opset 13: conv/batchnorm/relu stem, a residual block, max
                   pool, a strided conv, global average pool, flatten, gemm,
                   softmax
  mobilenet_mini   opset 13: conv + clip (relu6), an inverted residual block
                   with a depthwise conv (group = channels), global average
                   pool, reshape, matmul + add
  bert_mini        opset 17: one transformer encoder layer (4 heads, hidden
                   64, sequence 16): Q/K/V projections, reshape/transpose to
                   heads, scaled dot-product softmax attention, output
                   projection, residual + LayerNormalization, GELU (erf)
                   feed-forward, residual + LayerNormalization
  resnet_mini_external
                   resnet_mini with its weights in a side file (external data)

Needs Debian's python3-onnx and python3-numpy (tools/dev/install_deps.sh).
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    """Collects nodes and initializers; names values."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, hint):
        self.count += 1
        return "%s_%d" % (hint, self.count)

    def weight(self, hint, shape, scale=0.3, positive=False):
        n = self.name(hint)
        if positive:
            value = self.rng.uniform(0.5, 1.5, size=shape).astype(np.float32)
        else:
            value = self.rng.uniform(-scale, scale, size=shape).astype(np.float32)
        self.inits.append(numpy_helper.from_array(value, n))
        return n, value

    def const(self, hint, value):
        n = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(value), n))
        return n

    def node(self, op, inputs, num_outputs=1, **attrs):
        outs = [self.name(op.lower()) for _ in range(num_outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=outs[0], **attrs))
        return outs[0] if num_outputs == 1 else outs


# ---------------------------------------------------------------- NumPy ops

def np_conv(x, w, b=None, stride=1, pad=0, group=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, o, oh, ow), dtype=np.float64)
    opg = o // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * opg:(g + 1) * opg].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                y[:, g * opg:(g + 1) * opg] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def np_bn(x, gamma, beta, mean, var, eps=1e-5):
    s = (1, -1, 1, 1)
    return (x - mean.reshape(s)) / np.sqrt(var.reshape(s) + eps) * gamma.reshape(s) + beta.reshape(s)


def np_maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_layernorm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def np_erf(x):
    return np.vectorize(math.erf)(x)


# --------------------------------------------------------------- the models

def conv_bn(b, x, xv, cin, cout, k, stride, pad, group=1, relu=True, clip6=False):
    w, wv = b.weight("w", (cout, cin // group, k, k))
    g, gv = b.weight("gamma", (cout,), positive=True)
    be, bev = b.weight("beta", (cout,))
    m, mv = b.weight("mean", (cout,))
    v, vv = b.weight("var", (cout,), positive=True)
    y = b.node("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride],
               pads=[pad, pad, pad, pad], group=group)
    y = b.node("BatchNormalization", [y, g, be, m, v], epsilon=1e-5)
    yv = np_bn(np_conv(xv, wv, stride=stride, pad=pad, group=group), gv, bev, mv, vv)
    if relu:
        y = b.node("Relu", [y])
        yv = np.maximum(yv, 0)
    if clip6:
        lo = b.const("zero", np.float32(0))
        hi = b.const("six", np.float32(6))
        y = b.node("Clip", [y, lo, hi])
        yv = np.clip(yv, 0, 6)
    return y, yv


def resnet_mini():
    b = Builder(1)
    xv = b.rng.uniform(-1, 1, size=(1, 3, 32, 32)).astype(np.float32)
    y, yv = conv_bn(b, "input", xv.astype(np.float64), 3, 16, 3, 1, 1)
    # Two residual blocks of the same shapes, each with its own weights: kiln
    # compiles their kernels once and passes each block its own weights.
    for _ in range(2):
        r, rv = conv_bn(b, y, yv, 16, 16, 3, 1, 1)
        r, rv = conv_bn(b, r, rv, 16, 16, 3, 1, 1, relu=False)
        y = b.node("Add", [y, r])
        y = b.node("Relu", [y])
        yv = np.maximum(yv + rv, 0)
    y = b.node("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    yv = np_maxpool2(yv)
    y, yv = conv_bn(b, y, yv, 16, 32, 3, 2, 1)
    y = b.node("GlobalAveragePool", [y])
    yv = yv.mean(axis=(2, 3), keepdims=True)
    y = b.node("Flatten", [y], axis=1)
    yv = yv.reshape(1, -1)
    w, wv = b.weight("fc_w", (10, 32))
    c, cv = b.weight("fc_b", (10,))
    y = b.node("Gemm", [y, w, c], transB=1)
    yv = yv @ wv.T.astype(np.float64) + cv
    y = b.node("Softmax", [y], axis=1)
    yv = np_softmax(yv, axis=1)
    return b, 13, [("input", xv)], [(y, yv)]


def mobilenet_mini():
    b = Builder(2)
    xv = b.rng.uniform(-1, 1, size=(1, 3, 32, 32)).astype(np.float32)
    y, yv = conv_bn(b, "input", xv.astype(np.float64), 3, 16, 3, 2, 1, relu=False, clip6=True)
    # Inverted residual: expand 1x1, depthwise 3x3, project 1x1, add.
    e, ev = conv_bn(b, y, yv, 16, 48, 1, 1, 0, relu=False, clip6=True)
    e, ev = conv_bn(b, e, ev, 48, 48, 3, 1, 1, group=48, relu=False, clip6=True)
    e, ev = conv_bn(b, e, ev, 48, 16, 1, 1, 0, relu=False)
    y = b.node("Add", [y, e])
    yv = yv + ev
    y = b.node("GlobalAveragePool", [y])
    yv = yv.mean(axis=(2, 3), keepdims=True)
    shape = b.const("shape", np.array([1, 16], dtype=np.int64))
    y = b.node("Reshape", [y, shape])
    yv = yv.reshape(1, 16)
    w, wv = b.weight("fc_w", (16, 10))
    c, cv = b.weight("fc_b", (10,))
    y = b.node("MatMul", [y, w])
    y = b.node("Add", [y, c])
    yv = yv @ wv.astype(np.float64) + cv
    return b, 13, [("input", xv)], [(y, yv)]


def bert_mini():
    b = Builder(3)
    seq, hidden, heads = 16, 64, 4
    dh = hidden // heads
    xv = b.rng.uniform(-1, 1, size=(1, seq, hidden)).astype(np.float32)
    x = "input"
    x64 = xv.astype(np.float64)

    def linear(t, tv, din, dout):
        w, wv = b.weight("w", (din, dout), scale=0.2)
        c, cv = b.weight("b", (dout,), scale=0.2)
        y = b.node("MatMul", [t, w])
        y = b.node("Add", [y, c])
        return y, tv @ wv.astype(np.float64) + cv

    def split_heads(t, tv):
        shape = b.const("shape", np.array([1, seq, heads, dh], dtype=np.int64))
        t = b.node("Reshape", [t, shape])
        t = b.node("Transpose", [t], perm=[0, 2, 1, 3])
        return t, tv.reshape(1, seq, heads, dh).transpose(0, 2, 1, 3)

    q, qv = split_heads(*linear(x, x64, hidden, hidden))
    k, kv = split_heads(*linear(x, x64, hidden, hidden))
    v, vv = split_heads(*linear(x, x64, hidden, hidden))
    kt = b.node("Transpose", [k], perm=[0, 1, 3, 2])
    s = b.node("MatMul", [q, kt])
    scale = b.const("scale", np.float32(math.sqrt(dh)))
    s = b.node("Div", [s, scale])
    s = b.node("Softmax", [s], axis=-1)
    sv = np_softmax(qv @ kv.transpose(0, 1, 3, 2) / math.sqrt(dh), axis=-1)
    a = b.node("MatMul", [s, v])
    av = sv @ vv
    a = b.node("Transpose", [a], perm=[0, 2, 1, 3])
    shape = b.const("shape", np.array([1, seq, hidden], dtype=np.int64))
    a = b.node("Reshape", [a, shape])
    av = av.transpose(0, 2, 1, 3).reshape(1, seq, hidden)
    o, ov = linear(a, av, hidden, hidden)
    h = b.node("Add", [x, o])
    hv = x64 + ov
    g1, g1v = b.weight("ln_gamma", (hidden,), positive=True)
    b1, b1v = b.weight("ln_beta", (hidden,))
    h = b.node("LayerNormalization", [h, g1, b1], axis=-1, epsilon=1e-5)
    hv = np_layernorm(hv, g1v, b1v)
    f, fv = linear(h, hv, hidden, 4 * hidden)
    # GELU: 0.5 * f * (1 + erf(f / sqrt(2))).
    r2 = b.const("sqrt2", np.float32(math.sqrt(2.0)))
    one = b.const("one", np.float32(1.0))
    half = b.const("half", np.float32(0.5))
    t = b.node("Div", [f, r2])
    t = b.node("Erf", [t])
    t = b.node("Add", [t, one])
    t = b.node("Mul", [f, t])
    f = b.node("Mul", [t, half])
    fv = 0.5 * fv * (1 + np_erf(fv / math.sqrt(2.0)))
    f, fv = linear(f, fv, 4 * hidden, hidden)
    h2 = b.node("Add", [h, f])
    h2v = hv + fv
    g2, g2v = b.weight("ln_gamma", (hidden,), positive=True)
    b2, b2v = b.weight("ln_beta", (hidden,))
    y = b.node("LayerNormalization", [h2, g2, b2], axis=-1, epsilon=1e-5)
    yv = np_layernorm(h2v, g2v, b2v)
    return b, 17, [("input", xv)], [(y, yv)]


def write(out_dir, name, built, external=False):
    b, opset, inputs, outputs = built
    graph = helper.make_graph(
        b.nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape)) for n, v in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape)) for n, v in outputs],
        initializer=b.inits)
    model = helper.make_model(graph, producer_name="kiln tests/onnx/models/make_models.py",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    if external:
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="weights.bin", size_threshold=0)
    else:
        onnx.save_model(model, path)
    for i, (n, v) in enumerate(inputs):
        t = numpy_helper.from_array(v.astype(np.float32), n)
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(t.SerializeToString())
    for i, (n, v) in enumerate(outputs):
        t = numpy_helper.from_array(v.astype(np.float32), n)
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(t.SerializeToString())


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_models.py OUT_DIR")
    out = sys.argv[1]
    write(out, "resnet_mini", resnet_mini())
    write(out, "mobilenet_mini", mobilenet_mini())
    write(out, "bert_mini", bert_mini())
    write(out, "resnet_mini_external", resnet_mini(), external=True)


if __name__ == "__main__":
    main()
