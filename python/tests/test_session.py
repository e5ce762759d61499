"""The kiln package end to end on examples/resnet_mini.onnx: import, compile,
load, run against NumPy's reference outputs, DLPack both ways, profiles,
thread pools, threads and lifetimes. (The checks of the former
tests/ffi/python program are here: versions, inputs, the compile report,
the artifact's input, the outputs vs NumPy, the DLPack copy vs the output,
the wrong-shape error.)

Runs with pytest or with unittest (python3 -m unittest discover -s python/tests).
"""

import json
import os
import pickle
import threading
import unittest

import numpy as np

import kiln
from _paths import EXPECTED, INPUT, MODEL, scratch

# |a - b| <= 1e-4 + 1e-4 * |b|, as the FFI programs compared.
RTOL = ATOL = 1e-4

_compiled = {}


def resnet_mini() -> str:
    """examples/resnet_mini.onnx compiled once per process; the artifact's path."""
    if "path" not in _compiled:
        model = kiln.load_onnx(MODEL)
        path = os.path.join(scratch("kiln_py_"), "resnet_mini.so")
        _compiled["report"] = model.compile(path, opt_level=3)
        _compiled["path"] = path
    return _compiled["path"]


class Reference:
    x = np.load(INPUT)
    want = np.load(EXPECTED)


class VersionTest(unittest.TestCase):
    def test_versions(self):
        self.assertRegex(kiln.version(), r"^\d+\.\d+\.\d+$")
        self.assertGreaterEqual(kiln.api_version(), kiln.API_VERSION)
        self.assertTrue(kiln.library_path())


class ModelTest(unittest.TestCase):
    def test_inputs_and_outputs(self):
        model = kiln.load_onnx(MODEL)
        self.assertEqual([(i.name, i.shape, i.dtype) for i in model.inputs],
                         [("input", (1, 3, 32, 32), "float32")])
        self.assertEqual([(o.shape, o.dtype) for o in model.outputs], [((1, 10), "float32")])
        self.assertIn("nn.conv2d", model.text())
        self.assertIn("digraph", model.to_dot())
        self.assertEqual(model.warnings, [])  # a clean model
        self.assertEqual(model.optimize().warnings, [])

    def test_input_shapes(self):
        model = kiln.load_onnx(MODEL, input_shapes={"input": (1, 3, 32, 32)})
        self.assertEqual(model.inputs[0].shape, (1, 3, 32, 32))
        with self.assertRaises(kiln.Error) as cm:
            kiln.load_onnx(MODEL, input_shapes={"input": (1, 3, 32)})
        self.assertEqual(cm.exception.code, kiln.StatusCode.INVALID_ARGUMENT)
        self.assertIn("input", cm.exception.message)

    def test_bytes_and_load(self):
        with open(MODEL, "rb") as f:
            model = kiln.load_onnx_bytes(f.read())
        self.assertEqual(model.inputs[0].name, "input")
        self.assertEqual(kiln.load(MODEL).inputs[0].shape, (1, 3, 32, 32))

    def test_compile_report(self):
        path = resnet_mini()
        report = _compiled["report"]
        self.assertGreater(report.num_kernels, 0)
        self.assertGreaterEqual(report.num_fused_calls, report.num_kernels)
        self.assertEqual(report.file_bytes, os.path.getsize(path))
        self.assertLessEqual(report.arena_bytes, report.naive_bytes)

    def test_optimize_callback(self):
        model = kiln.load_onnx(MODEL)
        events = []
        optimized = model.optimize(opt_level=3, after_pass=events.append, after_pass_text=True)
        self.assertTrue(events)
        known = set(kiln.passes())
        self.assertIn("FuseOps", known)
        for e in events:
            self.assertIn(e.name, known)
            self.assertGreaterEqual(e.elapsed_ms, 0.0)
            self.assertIsNotNone(e.text)
        self.assertIn("FuseOps", [e.name for e in events])
        self.assertNotEqual(optimized.text(), model.text())

    def test_optimize_callback_exception_is_raised(self):
        def boom(event):
            raise RuntimeError("stop at " + event.name)

        with self.assertRaisesRegex(RuntimeError, "stop at"):
            kiln.load_onnx(MODEL).optimize(after_pass=boom)

    def test_emit(self):
        model = kiln.load_onnx(MODEL)
        self.assertIn("fn", model.emit("graph"))
        self.assertTrue(model.emit("loop"))
        with self.assertRaises(kiln.Error) as cm:
            model.emit("nonsense")
        self.assertEqual(cm.exception.code, kiln.StatusCode.INVALID_ARGUMENT)


class ArtifactTest(unittest.TestCase):
    def test_describe(self):
        a = kiln.Artifact(resnet_mini())
        self.assertEqual([(i.name, i.shape, i.dtype) for i in a.inputs],
                         [("input", (1, 3, 32, 32), "float32")])
        self.assertEqual(len(a.outputs), 1)
        self.assertEqual(a.outputs[0].shape, (1, 10))
        self.assertTrue(a.target.startswith("llvm"))
        self.assertIn("kiln", a.producer)
        graph = json.loads(a.graph_json)
        self.assertEqual(len(graph["nodes"]), a.num_nodes)
        stats = a.memory_stats()
        self.assertGreater(stats.arena_bytes, 0)
        self.assertEqual(stats.arena_bytes, _compiled["report"].arena_bytes)


class RunTest(unittest.TestCase):
    def setUp(self):
        self.artifact = kiln.Artifact(resnet_mini())
        self.session = self.artifact.session(num_threads=2)
        self.name = self.artifact.outputs[0].name

    def tearDown(self):
        self.session.close()
        self.artifact.close()

    def test_matches_numpy(self):
        out = self.session.run({"input": Reference.x})
        self.assertEqual(list(out), [self.name])
        got = out[self.name]
        self.assertEqual(got.dtype, np.float32)
        self.assertEqual(got.shape, Reference.want.shape)
        np.testing.assert_allclose(got, Reference.want, rtol=RTOL, atol=ATOL)
        self.assertEqual(int(got.argmax()), int(Reference.want.argmax()))

    def test_inputs_persist_and_index_keys(self):
        first = self.session.run({0: Reference.x})[self.name]
        again = self.session.run()[self.name]
        np.testing.assert_array_equal(first, again)
        np.testing.assert_array_equal(self.session.run(outputs=[0])[self.name], first)
        np.testing.assert_array_equal(self.session.output(self.name), first)

    def test_outputs_are_independent_copies(self):
        a = self.session.run({"input": Reference.x})[self.name]
        self.session.run({"input": np.zeros_like(Reference.x)})
        np.testing.assert_allclose(a, Reference.want, rtol=RTOL, atol=ATOL)

    def test_non_contiguous_and_list_inputs(self):
        x = np.asfortranarray(Reference.x)
        self.assertFalse(x.flags.c_contiguous)
        out = self.session.run({"input": x})[self.name]
        np.testing.assert_allclose(out, Reference.want, rtol=RTOL, atol=ATOL)
        out = self.session.run({"input": Reference.x.tolist()})[self.name]
        np.testing.assert_allclose(out, Reference.want, rtol=RTOL, atol=ATOL)

    def test_zero_copy_reads_in_place(self):
        x = Reference.x.copy()
        self.session.set_input("input", x, zero_copy=True)
        np.testing.assert_allclose(self.session.run()[self.name], Reference.want, rtol=RTOL,
                                   atol=ATOL)
        x[...] = 0.0  # the session reads this buffer on the next run
        zeros = self.session.run()[self.name]
        self.session.set_input("input", np.zeros_like(x))
        np.testing.assert_array_equal(zeros, self.session.run()[self.name])
        self.assertFalse(np.allclose(zeros, Reference.want))

    def test_dlpack_output(self):
        view = self.session.run({"input": Reference.x})[self.name]
        t = self.session.output_dlpack(self.name)
        self.assertIsInstance(t, kiln.Tensor)
        self.assertEqual((t.shape, t.dtype, t.device), ((1, 10), "float32", (1, 0)))
        np.testing.assert_array_equal(t.numpy(), view)  # bit for bit
        a = np.from_dlpack(t)
        b = np.from_dlpack(t)  # a second export of the same tensor
        np.testing.assert_array_equal(a, view)
        np.testing.assert_array_equal(b, view)
        # The tensor outlives the session and the artifact, the array the tensor.
        self.session.close()
        self.artifact.close()
        del t
        np.testing.assert_array_equal(a, view)
        np.testing.assert_allclose(a, Reference.want, rtol=RTOL, atol=ATOL)

    def test_dlpack_input(self):
        class Producer:  # only the DLPack protocol, nothing NumPy would take directly
            def __init__(self, a):
                self.a = a

            def __dlpack__(self, stream=None):
                return self.a.__dlpack__()

            def __dlpack_device__(self):
                return self.a.__dlpack_device__()

        x = Reference.x.copy()
        for value in (Producer(x), kiln.from_dlpack(x), kiln.from_dlpack(Producer(x))):
            out = self.session.run({"input": value})[self.name]
            np.testing.assert_allclose(out, Reference.want, rtol=RTOL, atol=ATOL)
        t = kiln.from_dlpack(x)
        self.assertEqual((t.shape, t.dtype), ((1, 3, 32, 32), "float32"))
        np.testing.assert_array_equal(t.numpy(), x)
        x[0, 0, 0, 0] = 42.0  # adopted without a copy
        self.assertEqual(t.numpy()[0, 0, 0, 0], 42.0)
        with self.assertRaises(kiln.Error):
            kiln.from_dlpack(object())

    def test_wrong_shape(self):
        with self.assertRaises(kiln.Error) as cm:
            self.session.run({"input": np.zeros((1, 3, 16, 16), np.float32)})
        e = cm.exception
        self.assertEqual(e.code, kiln.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(int(e.code), 3)
        self.assertIn("input", e.message)
        self.assertIn("[1,3,32,32]", e.message)
        self.assertTrue(str(e).startswith("INVALID_ARGUMENT: "))
        again = pickle.loads(pickle.dumps(e))
        self.assertEqual((again.code, again.message), (e.code, e.message))

    def test_wrong_dtype_and_names(self):
        with self.assertRaises(kiln.Error) as cm:
            self.session.run({"input": Reference.x.astype(np.float64)})
        self.assertEqual(cm.exception.code, kiln.StatusCode.INVALID_ARGUMENT)
        self.assertIn("float32", cm.exception.message)
        with self.assertRaises(kiln.Error) as cm:
            self.session.run({"nope": Reference.x})
        self.assertEqual(cm.exception.code, kiln.StatusCode.NOT_FOUND)
        self.assertIn("input", cm.exception.message)
        with self.assertRaises(kiln.Error) as cm:
            self.session.run({"input": Reference.x}, outputs=[5])
        self.assertEqual(cm.exception.code, kiln.StatusCode.OUT_OF_RANGE)
        with self.assertRaises(kiln.Error) as cm:
            self.session.run({"input": np.zeros((2,), dtype=complex)})
        self.assertEqual(cm.exception.code, kiln.StatusCode.INVALID_ARGUMENT)

    def test_run_before_inputs(self):
        fresh = self.artifact.session(num_threads=1)
        with self.assertRaises(kiln.Error) as cm:
            fresh.run()
        self.assertEqual(cm.exception.code, kiln.StatusCode.FAILED_PRECONDITION)
        self.assertIn("input", cm.exception.message)
        fresh.close()
        with self.assertRaises(kiln.Error) as cm:
            fresh.run({"input": Reference.x})
        self.assertEqual(cm.exception.code, kiln.StatusCode.FAILED_PRECONDITION)

    def test_profile(self):
        self.session.set_input("input", Reference.x)
        profile = self.session.profile(warmup=1, repeat=3)
        self.assertGreater(len(profile), 0)
        self.assertEqual(len(profile.rows), _compiled["report"].num_fused_calls)
        for row in profile:
            self.assertTrue(row.name)
            self.assertTrue(row.op)
            self.assertGreaterEqual(row.time_us, 0.0)
        self.assertAlmostEqual(profile.total_us, sum(r.time_us for r in profile), delta=1e-3)
        self.assertIn("Node Name", profile.table)
        self.assertEqual(len(json.loads(profile.chrome_trace)["traceEvents"]), len(profile))
        # A profile is a full run: the outputs are valid afterwards.
        np.testing.assert_allclose(self.session.output(0), Reference.want, rtol=RTOL, atol=ATOL)

    def test_benchmark_and_dump(self):
        self.session.set_input("input", Reference.x)
        result = self.session.benchmark(warmup=1, repeat=5, workload="resnet_mini")
        self.assertEqual(result.repeat, 5)
        self.assertGreater(result.mean_ms, 0.0)
        self.assertLessEqual(result.min_ms, result.mean_ms)
        line = json.loads(result.log_line)
        self.assertEqual((line["engine"], line["workload"]), ("kiln", "resnet_mini"))
        self.assertEqual(len(line["runtime_raw"]), 5)
        d = scratch("kiln_dump_")
        self.session.debug_dump(d, tensors=False)
        self.assertTrue(os.path.isfile(os.path.join(d, "profile.txt")))
        self.assertFalse(os.path.exists(os.path.join(d, "tensors")))


class LifetimeTest(unittest.TestCase):
    def test_artifact_closed_before_session(self):
        artifact = kiln.Artifact(resnet_mini())
        session = artifact.session(num_threads=1)
        artifact.close()  # released only after its last session
        with self.assertRaises(kiln.Error):
            _ = artifact.target
        out = session.run({"input": Reference.x})
        np.testing.assert_allclose(list(out.values())[0], Reference.want, rtol=RTOL, atol=ATOL)
        session.close()
        session.close()  # idempotent

    def test_garbage_in_any_order(self):
        artifact = kiln.Artifact(resnet_mini())
        session = artifact.session(num_threads=1)
        session.cycle = session  # a reference cycle: the collector picks the order
        artifact.cycle = (artifact, session)
        del artifact, session
        import gc

        gc.collect()

    def test_shared_pool(self):
        with kiln.ThreadPool(2) as pool, kiln.Artifact(resnet_mini()) as artifact:
            self.assertEqual(pool.num_threads, 2)
            sessions = [artifact.session(pool=pool) for _ in range(3)]
            pool.close()  # deferred: the sessions still use it
            for s in sessions:
                out = s.run({"input": Reference.x})
                np.testing.assert_allclose(list(out.values())[0], Reference.want, rtol=RTOL,
                                           atol=ATOL)
                s.close()
        self.assertGreaterEqual(kiln.default_num_threads(), 1)
        with self.assertRaises(kiln.Error) as cm:
            kiln.ThreadPool(-1)
        self.assertEqual(cm.exception.code, kiln.StatusCode.INVALID_ARGUMENT)

    def test_threads(self):
        artifact = kiln.Artifact(resnet_mini())
        shared = artifact.session(num_threads=1)
        errors = []

        def work(own: bool):
            try:
                s = artifact.session(num_threads=1) if own else shared
                for _ in range(20):
                    out = list(s.run({"input": Reference.x}).values())[0]
                    np.testing.assert_allclose(out, Reference.want, rtol=RTOL, atol=ATOL)
            except BaseException as e:  # handed to the main thread
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i % 2 == 0,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


class BadFilesTest(unittest.TestCase):
    def test_missing_model(self):
        with self.assertRaises(kiln.Error) as cm:
            kiln.load_onnx("/nonexistent/model.onnx")
        self.assertEqual(cm.exception.code, kiln.StatusCode.NOT_FOUND)
        self.assertIn("/nonexistent/model.onnx", cm.exception.message)

    def test_corrupt_artifact(self):
        with open(resnet_mini(), "rb") as f:
            data = bytearray(f.read())
        path = os.path.join(scratch("kiln_bad_"), "truncated.so")
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
        with self.assertRaises(kiln.Error) as cm:
            kiln.Artifact(path)
        self.assertIn(cm.exception.code, (kiln.StatusCode.DATA_LOSS, kiln.StatusCode.NOT_FOUND))
        self.assertIn("truncated.so", cm.exception.message)
        with self.assertRaises(kiln.Error) as cm:
            kiln.Artifact(path + ".missing")
        self.assertEqual(cm.exception.code, kiln.StatusCode.NOT_FOUND)


if __name__ == "__main__":
    unittest.main()
