"""Per-kernel time, FLOPs and share of the FMA peak, from `kiln debug`.

    kernels = read_debug_dumps([DIR, ...])   # DIR: one `kiln debug --dump-dir`

`kiln debug MODEL.so --dump-dir DIR` (tools/cmd_runtime.cc,
runtime_c/debug.c) writes DIR/graph.json (the executor plan: TVM graph JSON,
one "tvm_op" node per kernel call, with attrs.op_names, the input entries and
every entry's shape) and DIR/trace.json (one Chrome trace event per kernel
call of one timed run: name, dur in microseconds). Calls are matched to graph
nodes by position (the executor runs the op nodes in graph order) and checked
by name. With several dumps, each call's time is the median over them.

FLOPs come from the shapes of the kernel's inputs and output in graph.json,
in forms that hold for any layout (NCHW or blocked NCHWc, packed or plain
weights, transposed operands), because a fused kernel's elementwise tail
(bias, activation, residual add, layout_transform, reshape) keeps the number
of elements of its main operator's output:

  nn.conv2d      2 * N * OH * OW * |W|   (|W| = OC * IC/groups * KH * KW;
                 N, OH, OW from the output: dims 0, 2, 3 of NCHW or NCHWc);
                 the weight is the kernel's largest parameter of rank >= 3
                 (OIHW, blocked OIHWio, or packed for a GEMM as [OC/nr, K, nr]);
                 a Winograd kernel's transformed weight [16, OC/ob, IC/ib, ib,
                 ob] counts 9/16 of its size (direct-convolution FLOPs, so a
                 Winograd kernel may show more GFLOP/s than the FMA peak)
  nn.dense, nn.matmul, nn.batch_matmul
                 2 * M * N * K with M * N (times the batch) = |out| and
                 K = sqrt(|A| * |B| / (|out| * b)), b = the smaller batch of
                 A and B (1 for dense/matmul: the weight has none), when that
                 K is a dimension of both; else (a weight packed and padded,
                 e.g. [N/32, K, 32] for N = 1000) K = A's last dimension
  anything else  0: elementwise ops, layout transforms, pooling, softmax and
                 reductions are not counted (their GFLOP/s show as "-")

When channels are padded to the vector width, |W| and |out| include the
padding: the figure counts the work the kernel does, not the model's.
"""
import json
import math
import os
import statistics
from dataclasses import dataclass, field

MATMUL_OPS = ("nn.dense", "nn.matmul", "nn.batch_matmul")
CONV_OPS = ("nn.conv2d",)


@dataclass
class Kernel:
    name: str
    ops: str                   # op_names, comma-separated
    out_shape: tuple
    in_shapes: list            # one tuple per input
    times_us: list = field(default_factory=list)  # one per dump
    flops: float = 0.0
    basis: str = ""            # how flops were computed, with the shapes

    @property
    def time_us(self):
        return statistics.median(self.times_us) if self.times_us else 0.0


def _prod(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _fmt(shape):
    return "x".join(str(d) for d in shape)


def _contraction(a, b, out_n, batch):
    """K of a product of A (shape a) and B (shape b) with out_n output
    elements, when it is a whole number that is a dimension of both; else 0."""
    k2 = _prod(a) * _prod(b) / float(out_n * batch) if out_n else 0.0
    k = int(round(math.sqrt(k2))) if k2 > 0 else 0
    if k == 0 or k * k != round(k2) or k not in a[-2:] or k not in tuple(b)[-2:]:
        return 0
    return k


def kernel_flops(ops, in_shapes, in_is_param, out_shape):
    """(flops, basis) of one fused kernel; (0, "") when it has no conv or
    matrix product."""
    names = ops.split(",")
    out_n = _prod(out_shape)
    if any(o in CONV_OPS for o in names) and len(in_shapes) >= 2:
        # The weight: the largest parameter of rank 3 or more (a bias has OC
        # elements, the weight OC * IC/groups * KH * KW; an implicit-GEMM
        # kernel's weight is packed as [OC/nr, K, nr], a Winograd kernel's
        # transform matrices are rank 2), else input 1.
        cands = [s for s, p in zip(in_shapes[1:], in_is_param[1:]) if p and len(s) >= 3]
        w = max(cands, key=_prod) if cands else in_shapes[1]
        if len(out_shape) in (4, 5):  # NCHW / NCHWc
            spatial = out_shape[0] * out_shape[2] * out_shape[3]
            # A Winograd F(2x2, 3x3) kernel's weight is the transformed one,
            # [16, OC/ob, IC/ib, ib, ob]: 16 values per 3x3 filter. The work
            # is counted as the direct convolution's (the usual convention),
            # so its GFLOP/s can exceed the FMA peak.
            if len(w) == 5 and w[0] == 16:
                return (2.0 * spatial * _prod(w) * 9 / 16,
                        "conv2d (Winograd) 2*N*OH*OW*|W|*9/16: out %s, W %s"
                        % (_fmt(out_shape), _fmt(w)))
            return (2.0 * spatial * _prod(w),
                    "conv2d 2*N*OH*OW*|W|: out %s, W %s" % (_fmt(out_shape), _fmt(w)))
        return 0.0, "conv2d with a %d-d output: not counted" % len(out_shape)
    for op in names:
        if op not in MATMUL_OPS or len(in_shapes) < 2:
            continue
        a = in_shapes[0]
        if op == "nn.batch_matmul":
            b = in_shapes[1]
            k = _contraction(a, b, out_n, min(a[0], b[0]) if a and b else 1)
        else:
            # The weight: a parameter consistent with A and the output (the
            # bias and a residual input are not), else any consistent input.
            order = sorted(range(1, len(in_shapes)), key=lambda i: not in_is_param[i])
            b, k = in_shapes[1], 0
            for i in order:
                k = _contraction(a, in_shapes[i], out_n, 1)
                if k:
                    b = in_shapes[i]
                    break
            if not k:
                # A packed weight padded to the vector width (e.g. [N/32, K, 32]
                # for N = 1000): the largest parameter that has A's last
                # dimension (K) among its own.
                params = [s for s, p in zip(in_shapes[1:], in_is_param[1:])
                          if p and len(s) >= 2 and a and a[-1] in s]
                if params:
                    b, k = max(params, key=_prod), a[-1]
        if not k:
            return 0.0, "%s with shapes that do not fit (A %s, out %s): not counted" % (
                op[3:], _fmt(a), _fmt(out_shape))
        return (2.0 * out_n * k,
                "%s 2*M*N*K: A %s, B %s, out %s, K %d" % (op[3:], _fmt(a), _fmt(b),
                                                          _fmt(out_shape), k))
    return 0.0, ""


def _read_graph(path):
    with open(path) as f:
        g = json.load(f)
    nodes = g["nodes"]
    row = g["node_row_ptr"]
    shapes = g["attrs"]["shape"][1]
    inputs = set()
    params = set()
    for i in g["arg_nodes"]:
        name = nodes[i]["name"]
        # Parameters (the weights, folded constants) are named p0, p1, ...
        (params if name[:1] == "p" and name[1:].isdigit() else inputs).add(i)
    kernels = []
    for i, n in enumerate(nodes):
        if n["op"] != "tvm_op":
            continue
        ins = [tuple(shapes[row[e[0]] + e[1]]) for e in n["inputs"]]
        is_param = [e[0] in params for e in n["inputs"]]
        out = tuple(shapes[row[i]])
        k = Kernel(n["name"], n["attrs"].get("op_names", ""), out, ins)
        k.flops, k.basis = kernel_flops(k.ops, ins, is_param, out)
        kernels.append(k)
    return kernels


def _read_trace(path):
    with open(path) as f:
        t = json.load(f)
    return [(e["name"], float(e["dur"])) for e in t["traceEvents"] if e.get("ph") == "X"]


def read_debug_dumps(dirs):
    """The kernels of the model (from the first dump's graph.json), each with
    its time in every dump of `dirs`."""
    kernels = _read_graph(os.path.join(dirs[0], "graph.json"))
    for d in dirs:
        events = _read_trace(os.path.join(d, "trace.json"))
        if len(events) != len(kernels):
            raise RuntimeError("%s: %d trace events for %d kernel calls in graph.json"
                               % (d, len(events), len(kernels)))
        for k, (name, dur) in zip(kernels, events):
            if name != k.name:
                raise RuntimeError("%s: trace event '%s' where graph.json has '%s'"
                                   % (d, name, k.name))
            k.times_us.append(dur)
    return kernels
