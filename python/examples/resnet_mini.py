"""Import, compile, load and run a model with the kiln package; check it against NumPy.

    python3 resnet_mini.py MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR

The program tests/ffi runs in every language, written with ``import kiln``:
prints the library and ABI versions and the model's inputs, compiles the
model to WORKDIR/model.so and prints the compile report, loads the artifact
(one float32 [1, 3, 32, 32] input named "input", one output), runs a session
on INPUT.npy and compares the output with EXPECTED.npy
(|a - b| <= 1e-4 + 1e-4 |b|), checks that the DLPack copy of the output
equals it bit for bit, and that an input of the wrong shape is a
kiln.Error with INVALID_ARGUMENT naming the input. Exits 0 only if every
check passed; each failure is printed as "FAIL: ...".
"""

import os
import sys

import numpy as np

import kiln


def main(argv):
    if len(argv) != 5:
        print("usage: %s MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR" % argv[0], file=sys.stderr)
        return 2
    model_path, input_path, expected_path, workdir = argv[1:]
    failures = []

    def check(ok, what):
        if not ok:
            print("FAIL: " + what, file=sys.stderr)
            failures.append(what)

    print("kiln %s (C ABI %d) from %s" % (kiln.version(), kiln.api_version(), kiln.library_path()))
    check(kiln.api_version() >= kiln.MIN_API_VERSION,
          "kiln_api_version() < %d" % kiln.MIN_API_VERSION)

    model = kiln.load_onnx(model_path)
    for i in model.inputs:
        print("model input: %s %s %s" % (i.name, list(i.shape), i.dtype))
    check(len(model.inputs) == 1, "the model should have 1 input")
    so = os.path.join(workdir, "model.so")
    report = model.compile(so, opt_level=3)
    print("compiled %s: %d kernels, %d bytes" % (so, report.num_kernels, report.file_bytes))
    check(report.num_kernels > 0, "report.num_kernels should be > 0")
    check(report.file_bytes == os.path.getsize(so), "report.file_bytes should be the file's size")
    model.close()

    with kiln.Artifact(so) as artifact, artifact.session() as session:
        check(len(artifact.inputs) == 1 and len(artifact.outputs) == 1,
              "the artifact should have 1 input and 1 output")
        first = artifact.inputs[0]
        check((first.name, first.shape, first.dtype) == ("input", (1, 3, 32, 32), "float32"),
              "artifact input 0 should be float32 'input' [1, 3, 32, 32], is %s" % (first,))

        x, want = np.load(input_path), np.load(expected_path)
        name = artifact.outputs[0].name
        got = session.run({"input": x})[name]
        check(got.shape == want.shape, "output shape %s, expected %s" % (got.shape, want.shape))
        if got.shape == want.shape:
            err = np.abs(got.astype(np.float64) - want)
            print("compared %d elements: max abs error %.3g" % (got.size, err.max()))
            check(bool(np.all(err <= 1e-4 + 1e-4 * np.abs(want))),
                  "output differs from EXPECTED.npy")

        tensor = session.output_dlpack(name)
        check(np.array_equal(np.from_dlpack(tensor), got), "the DLPack copy differs from the output")

        try:
            session.run({"input": np.zeros((1, 3, 16, 16), np.float32)})
            check(False, "an input of shape [1, 3, 16, 16] should be refused")
        except kiln.Error as e:
            print("wrong shape: %s" % e)
            check(e.code == kiln.StatusCode.INVALID_ARGUMENT,
                  "wrong shape: code %r, expected INVALID_ARGUMENT" % e.code)
            check("input" in e.message, 'wrong shape: the message should mention "input"')

    if failures:
        print("python: %d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print("python: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
