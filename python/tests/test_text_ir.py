"""kiln.parse -> compile -> run on small text-IR models, checked against NumPy:
several outputs, integer dtypes, a kiln output fed back as an input through
DLPack, and the parser's error positions."""

import os
import unittest

import numpy as np

import kiln
from _paths import scratch

TWO_OUTPUTS = """#[version = "0.1"]
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  %0 = add(%x, %y);
  (%0, multiply(%0, %y))
}
"""

INT32 = """#[version = "0.1"]
def @main(%a: Tensor[(4,), int32], %b: Tensor[(4,), int32]) -> Tensor[(4,), int32] {
  subtract(multiply(%a, %b), %a)
}
"""


def build(text: str, name: str) -> kiln.Artifact:
    model = kiln.parse(text, source_name=name + ".kir")
    path = os.path.join(scratch("kiln_ir_"), name + ".so")
    model.compile(path, opt_level=2)
    return kiln.Artifact(path)


class TextIRTest(unittest.TestCase):
    def test_two_outputs(self):
        artifact = build(TWO_OUTPUTS, "two_outputs")
        self.assertEqual([o.name for o in artifact.outputs], ["output0", "output1"])
        session = artifact.session(num_threads=1)
        rng = np.random.default_rng(16)
        x = rng.standard_normal((2, 3)).astype(np.float32)
        y = rng.standard_normal((2, 3)).astype(np.float32)
        out = session.run({"x": x, "y": y})
        np.testing.assert_allclose(out["output0"], x + y, rtol=1e-6)
        np.testing.assert_allclose(out["output1"], (x + y) * y, rtol=1e-6)
        self.assertEqual(list(session.run(outputs=["output1"])), ["output1"])
        # A kiln tensor goes back in through DLPack, without NumPy in between.
        again = session.run({"x": session.output_dlpack("output0"), "y": y})
        np.testing.assert_allclose(again["output0"], x + 2 * y, rtol=1e-5)

    def test_names_dims_and_compile_progress(self):
        model = kiln.parse(
            '#[version = "0.1"]\n'
            'def @main(%x: Tensor[(N, 3), float32], output_names=["probs"]) {\n'
            '  nn.softmax(%x, axis=1)\n}\n')
        self.assertEqual([o.name for o in model.outputs], ["probs"])
        self.assertEqual(model.dim_names(0), ["N", "3"])
        self.assertEqual(model.dim_names(0, output=True), ["N", "3"])
        self.assertEqual(kiln.parse(TWO_OUTPUTS).outputs[1].name, "output1")
        with self.assertRaises(kiln.Error) as cm:
            model.dim_names(1)
        self.assertEqual(cm.exception.code, kiln.StatusCode.OUT_OF_RANGE)
        events = []
        path = os.path.join(scratch("kiln_ir_"), "progress.so")
        report = kiln.parse(TWO_OUTPUTS).compile(
            path, progress=lambda *e: events.append(e), num_threads=2)
        n = report.num_kernels
        # add and multiply: two different fused functions, one kernel each;
        # lowering counts the functions, code generation the kernels.
        self.assertEqual((report.num_fused_calls, n), (2, 2))
        self.assertEqual(events, [("passes", 0, 0)] + [("lower", k, 2) for k in range(3)] +
                         [("plan", 0, 0)] + [("codegen", k, n) for k in range(n + 1)] +
                         [("link", 0, 0)])

        def boom(phase, done, total):
            raise ValueError("stop at " + phase)

        with self.assertRaises(ValueError):
            kiln.parse(TWO_OUTPUTS).compile(path, progress=boom)

    def test_int32(self):
        artifact = build(INT32, "int32")
        self.assertEqual(artifact.inputs[0].dtype, "int32")
        session = artifact.session(num_threads=1)
        a = np.array([1, -2, 3, 40000], np.int32)
        b = np.array([5, 6, -7, 40000], np.int32)
        out = session.run({"a": a, "b": b})["output0"]
        self.assertEqual(out.dtype, np.int32)
        np.testing.assert_array_equal(out, a * b - a)  # int32 wraps around, as in NumPy
        with self.assertRaises(kiln.Error) as cm:
            session.run({"a": a.astype(np.int64), "b": b})
        self.assertEqual(cm.exception.code, kiln.StatusCode.INVALID_ARGUMENT)
        self.assertIn("int32", cm.exception.message)

    def test_round_trip_and_types(self):
        model = kiln.parse(TWO_OUTPUTS)
        self.assertEqual([(i.name, i.shape) for i in model.inputs], [("x", (2, 3)), ("y", (2, 3))])
        self.assertEqual(len(model.outputs), 2)
        again = kiln.parse(model.text())
        self.assertEqual(again.text(), model.text())
        self.assertIn("float32", model.text(show_types=True))

    def test_syntax_error_position(self):
        with self.assertRaises(kiln.Error) as cm:
            kiln.parse('#[version = "0.1"]\ndef @main(%x: Tensor[(2), float32]) {\n  add(%x, \n}\n',
                       source_name="broken.kir")
        self.assertEqual(cm.exception.code, kiln.StatusCode.INVALID_ARGUMENT)
        self.assertRegex(cm.exception.message, r"broken\.kir:\d+:\d+")

    def test_unknown_pass(self):
        with self.assertRaises(kiln.Error) as cm:
            kiln.parse(TWO_OUTPUTS).optimize(passes=["NoSuchPass"])
        self.assertEqual(cm.exception.code, kiln.StatusCode.NOT_FOUND)
        self.assertIn("FoldConstant", cm.exception.message)  # the known passes are listed

    def test_explicit_passes(self):
        names = []
        kiln.parse(TWO_OUTPUTS).optimize(passes=["InferType", "FuseOps"],
                                         after_pass=lambda e: names.append(e.name))
        self.assertIn("FuseOps", names)


if __name__ == "__main__":
    unittest.main()
