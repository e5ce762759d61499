#!/usr/bin/env python3
"""kernels.py's FLOP counts for the weight layouts kiln's x86 strategies
produce, against 2 * MACs worked out from each operator's logical shapes
(as a model's author would: OC * IC/groups * KH * KW per output pixel)."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402


def conv_flops(n, oc, oh, ow, ic_per_group, kh, kw):
    return 2 * n * oc * oh * ow * ic_per_group * kh * kw


class KernelFlopsTest(unittest.TestCase):
    def check(self, ops, ins, params, out, expected):
        flops, basis = kernels.kernel_flops(ops, ins, params, out)
        self.assertEqual(flops, expected, basis)

    def test_direct_nchwc_conv(self):
        # 3x3, 64 -> 64 channels at 56x56: weight OIHW4i16o-style blocks.
        self.check("nn.conv2d,add,nn.relu",
                   [(1, 4, 58, 58, 16), (4, 4, 3, 3, 16, 16), (1, 4, 1, 1, 16)],
                   [False, True, True], (1, 4, 56, 56, 16),
                   conv_flops(1, 64, 56, 56, 64, 3, 3))

    def test_implicit_gemm_conv(self):
        # 1x1, 256 -> 64 channels at 56x56; the weight packed [OC/16, K, 16]
        # is rank 3 and the bias (rank 5) is smaller.
        self.check("nn.conv2d,add,nn.relu",
                   [(1, 16, 56, 56, 16), (4, 256, 16), (1, 4, 1, 1, 16)],
                   [False, True, True], (1, 4, 56, 56, 16),
                   conv_flops(1, 64, 56, 56, 256, 1, 1))
        # 3x3 stride 2, 256 -> 256 at 14x14: K = 256 * 9.
        self.check("nn.conv2d,add,nn.relu",
                   [(1, 16, 28, 28, 16), (16, 2304, 16), (1, 16, 1, 1, 16)],
                   [False, True, True], (1, 16, 14, 14, 16),
                   conv_flops(1, 256, 14, 14, 256, 3, 3))

    def test_winograd_conv_counts_the_direct_convolution(self):
        # Transformed weight [16, OC/16, IC/16, 16, 16] and two rank-2
        # transform matrices; 3x3, 64 -> 64 at 56x56.
        self.check("nn.conv2d,add,nn.relu",
                   [(1, 4, 56, 56, 16), (16, 4, 4, 16, 16), (16, 16), (4, 16),
                    (1, 4, 1, 1, 16)],
                   [False, True, True, True, True], (1, 4, 56, 56, 16),
                   conv_flops(1, 64, 56, 56, 64, 3, 3))

    def test_depthwise_conv(self):
        self.check("nn.conv2d,add,clip",
                   [(1, 9, 58, 58, 16), (9, 1, 3, 3, 1, 16), (1, 9, 1, 1, 16)],
                   [False, True, True], (1, 9, 56, 56, 16),
                   conv_flops(1, 144, 56, 56, 1, 3, 3))

    def test_dense_with_a_padded_packed_weight(self):
        # [1, 2048] x [1000, 2048]^T with the weight packed [1008/16, 2048, 16].
        self.check("nn.dense,add", [(1, 2048), (63, 2048, 16), (1, 1000)],
                   [False, True, True], (1, 1000), 2 * 1000 * 2048)

    def test_batch_matmul(self):
        self.check("nn.batch_matmul", [(12, 128, 64), (12, 128, 64)],
                   [False, False], (12, 128, 128), 2 * 12 * 128 * 128 * 64)

    def test_elementwise_counts_nothing(self):
        self.check("add,nn.relu", [(1, 64), (1, 64)], [False, False], (1, 64), 0.0)

    def test_dumps_are_matched_to_the_graph(self):
        graph = {
            "nodes": [
                {"op": "null", "name": "input", "inputs": []},
                {"op": "null", "name": "p0", "inputs": []},
                {"op": "tvm_op", "name": "fused_nn_conv2d",
                 "attrs": {"op_names": "nn.conv2d"}, "inputs": [[0, 0, 0], [1, 0, 0]]},
            ],
            "arg_nodes": [0, 1],
            "node_row_ptr": [0, 1, 2, 3],
            "heads": [[2, 0, 0]],
            "attrs": {"shape": ["list_shape", [[1, 1, 8, 8, 16], [2, 512, 16], [1, 2, 8, 8, 16]]]},
        }
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "graph.json"), "w") as f:
                json.dump(graph, f)
            with open(os.path.join(d, "trace.json"), "w") as f:
                json.dump({"traceEvents": [{"name": "fused_nn_conv2d", "ph": "X", "dur": 10.0}]}, f)
            (k,) = kernels.read_debug_dumps([d])
            self.assertEqual(k.flops, conv_flops(1, 32, 8, 8, 512, 1, 1))
            self.assertEqual(k.time_us, 10.0)
            with open(os.path.join(d, "trace.json"), "w") as f:
                json.dump({"traceEvents": [{"name": "other", "ph": "X", "dur": 1.0}]}, f)
            with self.assertRaises(RuntimeError):
                kernels.read_debug_dumps([d])


if __name__ == "__main__":
    unittest.main()
