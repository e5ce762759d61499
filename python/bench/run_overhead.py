"""The cost of Python per Session.run, against the same loop written in C.

    python3 python/bench/run_overhead.py [--sdk DIR] [--model M.onnx] [--input X.npy]
                                         [--runs N] [--rounds R] [--threads T]

Compiles MODEL (default examples/resnet_mini.onnx) once, then alternates, R
rounds of N runs each, between

  * C:      python/bench/run_loop.c, built here with the SDK's headers against
            libkiln.so: kiln_session_set_input + kiln_session_run +
            kiln_session_copy_output per iteration (what Session.run does);
  * Python: ``session.run({"input": x})``, returning a new NumPy array;
  * Python, run only: ``session.run()`` with the input already set (no
            set_input in the loop) -- the floor of the binding's own cost;

and prints the median time per iteration of each (the median over rounds of
each round's median), the difference Python - C, and the machine. It does the
same for a one-operator model of the same input (``add(%x, 1f)``), where
the kernel costs almost nothing: that difference is the binding's own cost,
while the first also holds what Python's work between runs costs the
kernels (caches). The SDK
(include/ and lib/) defaults to the one holding the library kiln loaded, or
bazel-bin/c_api/sdk. Rounds alternate so that drifts in the machine's speed
hit both sides alike; compare the difference, not the absolute times, across
machines.
"""

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))

import kiln  # noqa: E402


def find_sdk(explicit):
    candidates = [explicit] if explicit else []
    if os.environ.get("KILN_SDK"):
        candidates.append(os.environ["KILN_SDK"])
    candidates += [str(Path(kiln.library_path()).resolve().parent.parent),
                   str(REPO / "bazel-bin" / "c_api" / "sdk")]
    for c in candidates:
        if c and (Path(c) / "include" / "kiln" / "kiln_runtime.h").is_file() and \
                (Path(c) / "lib" / "libkiln.so").is_file():
            return Path(c)
    sys.exit("run_overhead: no SDK (include/kiln/kiln_runtime.h + lib/libkiln.so) among %s; "
             "pass --sdk (bazel build --config=opt //c_api:sdk)" % candidates)


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def timed(fn, runs):
    """Median per-call time of fn() in microseconds (after a tenth as warm-up)."""
    for _ in range(runs // 10 + 1):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sdk")
    ap.add_argument("--model", default=str(REPO / "examples" / "resnet_mini.onnx"))
    ap.add_argument("--input", default=str(REPO / "examples" / "resnet_mini_input.npy"))
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    sdk = find_sdk(args.sdk)
    work = Path(tempfile.mkdtemp(prefix="kiln_overhead_", dir=os.environ.get("TEST_TMPDIR")))
    exe = work / "run_loop"
    cc = os.environ.get("CC", "cc")
    dlpack = ["-I/usr/include"] if Path("/usr/include/dlpack/dlpack.h").is_file() else []
    subprocess.run([cc, "-std=c11", "-O2", str(HERE / "run_loop.c"), "-I%s" % (sdk / "include"),
                    *dlpack, "-L%s" % (sdk / "lib"), "-Wl,-rpath,%s" % (sdk / "lib"), "-lkiln",
                    "-o", str(exe)], check=True)
    x = np.load(args.input)

    model = kiln.load_onnx(args.model)
    name = model.inputs[0].name
    trivial = kiln.parse('#[version = "0.1"]\ndef @main(%%%s: Tensor[(%s), float32]) {\n'
                         '  add(%%%s, 1f)\n}\n' % (name, ", ".join(map(str, x.shape)), name))
    print("machine: %s, %d CPUs, %s, Python %s, NumPy %s" % (
        cpu_name(), os.cpu_count(), platform.platform(), platform.python_version(),
        np.__version__))
    for i, (label, m) in enumerate(((os.path.basename(args.model), model),
                                    ("add(x, 1f)", trivial))):
        # A new path for each: the dynamic loader would hand back a library
        # still loaded under the same name.
        so = work / ("model%d.so" % i)
        m.compile(str(so))
        session = kiln.Artifact(str(so)).session(num_threads=args.threads)
        c_us, py_us, py_run_us = [], [], []
        for _ in range(args.rounds):
            out = subprocess.run([str(exe), str(so), args.input, str(args.runs),
                                  str(args.threads)], capture_output=True, text=True,
                                 check=True).stdout
            c_us.append(float(out.split("median_us=")[1].split()[0]))
            py_us.append(timed(lambda: session.run({name: x}), args.runs))
            session.set_input(name, x)
            py_run_us.append(timed(session.run, args.runs))
        session.close()
        c, py, py_run = (statistics.median(v) for v in (c_us, py_us, py_run_us))
        print("model: %s, %d thread(s), %d rounds x %d runs (median of round medians)" % (
            label, args.threads, args.rounds, args.runs))
        print("  C API  set_input+run+copy_output : %8.2f us" % c)
        print("  Python session.run({name: x})    : %8.2f us   (+%.2f us, %+.1f%%)" % (
            py, py - c, 100.0 * (py - c) / c))
        print("  Python session.run() (input set) : %8.2f us" % py_run)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
