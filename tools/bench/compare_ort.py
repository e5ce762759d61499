#!/usr/bin/env python3
"""kiln against ONNX Runtime on real models (the six of issue 13 by default,
models.py's others with --models), side by side in one run.

Run it through tools/bench/compare_ort.sh, which makes the Python environment
(Debian's torch/torchvision/onnx/numpy + onnxruntime from PyPI) and builds
kiln; this file does the measuring:

  1. the machine: CPU model, vector ISA, fp32 FMA peak on 1 and 2 cores
     (tools/bench/fma_peak.c, compiled here with cc -O2 -march=native);
  2. per model (models.py): export to ONNX once (cached in the work
     directory), `kiln compile` (timed), the outputs of `kiln run` against
     ONNX Runtime's on the same random input (max abs / rel error);
  3. per model and thread count: `kiln bench` (the median of its per-run
     times, runtime_raw) and ONNX Runtime (intra_op threads T, inter_op 1,
     ORT_ENABLE_ALL, sequential; the median of as many timed runs after the
     same warm-up), one after the other;
  4. per kernel, for ResNet-50 and BERT (kernels.py): `kiln debug` dumps,
     time, GFLOP/s and share of the FMA peak of every kernel;
  5. the report (report.py), written to --out, and every raw figure to
     WORK/results.json.

Every subprocess gets an argument list, never a shell string.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import kernels  # noqa: E402
import models  # noqa: E402
import report  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))


def log(msg):
    print("[compare_ort] " + msg, file=sys.stderr, flush=True)


def run(cmd, timeout=None, check=True):
    """Runs `cmd` (a list); returns the CompletedProcess (text)."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise CommandError(cmd, p)
    return p


class CommandError(RuntimeError):
    def __init__(self, cmd, p):
        self.cmd, self.returncode = cmd, p.returncode
        self.output = (p.stderr or "").strip() or (p.stdout or "").strip()
        super().__init__("%s exited with %d: %s" % (shlex.join(cmd), p.returncode,
                                                    self.output[-2000:]))


# --------------------------------------------------------------------------
# The machine
# --------------------------------------------------------------------------

def cpu_info():
    info = {"model": platform.processor() or "unknown", "flags": set()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "model name" and info["model"] in ("unknown", "x86_64", ""):
                    info["model"] = value
                elif key == "cpu family":
                    info.setdefault("family", value)
                elif key == "model":
                    info.setdefault("model_number", value)
                elif key == "flags" and not info["flags"]:
                    info["flags"] = set(value.split())
    except OSError:
        pass
    flags = info.pop("flags")
    isa = [f for f in ("avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx2",
                       "fma", "avx", "sse4_2") if f in flags]
    info["isa"] = " ".join(isa) or "unknown"
    info["cpus"] = os.cpu_count()
    info["kernel"] = platform.release()
    return info


def fma_peaks(work, thread_counts, before=None):
    """{threads: result dict} from tools/bench/fma_peak.c. With `before` (the
    same measured at the start of the run), each figure is the larger of the
    two: other work on the machine can only lower it."""
    exe = os.path.join(work, "fma_peak")
    if before is None:
        src = os.path.join(HERE, "fma_peak.c")
        cc = os.environ.get("CC", "cc")
        run([cc, "-O2", "-march=native", "-pthread", src, "-o", exe, "-lm"])
    out = {}
    for t in sorted(set(thread_counts) | {1, 2}):
        r = json.loads(run([exe, str(t)]).stdout.strip().splitlines()[-1])
        r["measured"] = [r["gflops"]]
        if before is not None:
            r["measured"] = before[t]["measured"] + r["measured"]
            r["gflops"] = max(r["measured"])
        out[t] = r
        log("FMA peak, %d thread%s: %.1f GFLOP/s (%s)%s"
            % (t, "" if t == 1 else "s", r["gflops"], r["isa"],
               "; measured %s" % " and ".join("%.1f" % g for g in r["measured"])
               if before is not None else ""))
    return out


# --------------------------------------------------------------------------
# Models: export, compile, check
# --------------------------------------------------------------------------

def ensure_exported(name, work, seed, force):
    """WORK/models/NAME.onnx, exported unless an export with the same seed,
    torch and models.py is there."""
    import hashlib
    d = os.path.join(work, "models")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, name + ".onnx")
    with open(os.path.join(HERE, "models.py"), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    stamp_path = path + ".stamp"
    stamp = {"seed": seed, "opset": 13, "models_py": digest}
    try:
        with open(stamp_path) as f:
            if not force and json.load(f) == stamp and os.path.exists(path):
                return path, 0.0
    except (OSError, ValueError):
        pass
    log("exporting %s" % name)
    t0 = time.perf_counter()
    models.export_model(name, path, seed)
    with open(stamp_path, "w") as f:
        json.dump(stamp, f)
    return path, time.perf_counter() - t0


def write_inputs(spec, work, seed):
    """The model's input arrays, and --input NAME=FILE arguments for kiln."""
    import numpy as np
    d = os.path.join(work, "inputs", spec.name)
    os.makedirs(d, exist_ok=True)
    feeds = models.make_input(spec, seed)
    args = []
    for name, value in feeds.items():
        path = os.path.join(d, name + ".npy")
        np.save(path, value)
        args += ["--input", "%s=%s" % (name, path)]
    return feeds, args


def kiln_compile(kiln, onnx_path, so_path, spec):
    cmd = [kiln, "compile", onnx_path, "-o", so_path, "--timing"]
    for name, (_, shape) in spec.inputs.items():
        cmd += ["--input-shape", "%s=%s" % (name, ",".join(str(d) for d in shape))]
    t0 = time.perf_counter()
    p = run(cmd)
    seconds = time.perf_counter() - t0
    timing = [l for l in p.stderr.splitlines() if l.startswith("kiln compile:")]
    return seconds, (timing[-1][len("kiln compile:"):].strip() if timing else "")


def ort_session(onnx_path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])


def check_outputs(kiln, so_path, input_args, onnx_path, feeds, out_dir, threads):
    """Runs kiln and ONNX Runtime once on `feeds`; the largest errors."""
    import numpy as np
    shutil.rmtree(out_dir, ignore_errors=True)
    run([kiln, "run", so_path, *input_args, "--output-dir", out_dir, "--quiet",
         "--threads", str(threads)])
    sess = ort_session(onnx_path, threads)
    ref = sess.run(None, feeds)
    names = [o.name for o in sess.get_outputs()]
    del sess
    result = {"max_abs": 0.0, "max_rel": 0.0, "ref_max": 0.0, "outputs": []}
    for i, (name, r) in enumerate(zip(names, ref)):
        path = os.path.join(out_dir, _file_safe(name) + ".npy")
        if not os.path.exists(path):  # kiln names unnamed outputs output0, ...
            path = os.path.join(out_dir, "output%d.npy" % i)
        k = np.load(path)
        if k.shape != r.shape:
            raise RuntimeError("output %s: kiln's shape %s, ONNX Runtime's %s"
                               % (name, k.shape, r.shape))
        diff = np.abs(k.astype(np.float64) - r.astype(np.float64))
        ref_max = float(np.max(np.abs(r))) if r.size else 0.0
        max_abs = float(np.max(diff)) if diff.size else 0.0
        if not np.all(np.isfinite(k)):
            max_abs = float("inf")
        rel = max_abs / ref_max if ref_max > 0 else max_abs
        result["outputs"].append({"name": name, "max_abs": max_abs, "max_rel": rel,
                                  "ref_max": ref_max, "shape": list(r.shape)})
        result["max_abs"] = max(result["max_abs"], max_abs)
        result["max_rel"] = max(result["max_rel"], rel)
        result["ref_max"] = max(result["ref_max"], ref_max)
    return result


def _file_safe(name):
    s = "".join(c if c.isalnum() or c in "_-." else "_" for c in (name or "output"))
    return "_" if s in (".", "..") else s


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------

def summary(times_ms):
    return {"median": statistics.median(times_ms), "mean": statistics.fmean(times_ms),
            "min": min(times_ms), "max": max(times_ms),
            "stdev": statistics.pstdev(times_ms), "runs": len(times_ms)}


def time_kiln(kiln, so_path, input_args, threads, runs, warmup):
    """kiln bench: the median of its per-run times (runtime_raw)."""
    p = run([kiln, "bench", so_path, "--repeat", str(runs), "--warmup", str(warmup),
             "--threads", str(threads), *input_args])
    line = json.loads(p.stdout.strip().splitlines()[-1])
    raw = [float(r["runtime_ms"]) for r in line.get("runtime_raw", [])]
    s = summary(raw) if raw else {"median": None, "runs": 0}
    s["raw"] = raw
    s["kiln_mean"] = line.get("runtime_ms_mean")
    s["source"] = "median of runtime_raw" if raw else "no runtime_raw: mean only"
    if not raw:
        s["median"] = line.get("runtime_ms_mean")
    return s


def time_ort(onnx_path, feeds, threads, runs, warmup):
    sess = ort_session(onnx_path, threads)
    names = [o.name for o in sess.get_outputs()]
    for _ in range(warmup):
        sess.run(names, feeds)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        sess.run(names, feeds)
        times.append((time.perf_counter_ns() - t0) / 1e6)
    del sess
    s = summary(times)
    s["raw"] = times
    return s


# --------------------------------------------------------------------------
# Per kernel
# --------------------------------------------------------------------------

def kernel_profile(kiln, so_path, input_args, threads, dumps, repeat, work, name):
    """`kiln debug` `dumps` times, each after 2 warm-up runs with per-node
    medians over `repeat` timed runs (--no-tensors: the tensors are not
    needed); the kernels with their median times over the dumps."""
    dirs = []
    for r in range(dumps):
        d = os.path.join(work, "debug", "%s-t%d-%d" % (name, threads, r))
        shutil.rmtree(d, ignore_errors=True)
        run([kiln, "debug", so_path, "--dump-dir", d, "--threads", str(threads),
             "--warmup", "2", "--repeat", str(repeat), "--no-tensors", *input_args])
        dirs.append(d)
    return kernels.read_debug_dumps(dirs)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kiln", required=True,
                   help="the kiln binary (compare_ort.sh builds one when not given)")
    p.add_argument("--models", default=",".join(models.DEFAULT_MODELS),
                   help="comma-separated, from: " + ", ".join(models.SPECS) +
                   "; 'all' for every one (default: " + ",".join(models.DEFAULT_MODELS) + ")")
    p.add_argument("--runs", type=int, default=None, help="timed runs per measurement, all rounds together (40)")
    p.add_argument("--warmup", type=int, default=None, help="untimed runs first (5)")
    p.add_argument("--rounds", type=int, default=4,
                   help="alternate kiln and ONNX Runtime this many times per measurement, "
                        "runs split between the rounds (4)")
    p.add_argument("--threads", default="1,2", help="thread counts (1,2)")
    p.add_argument("--kernels", default=None,
                   help="models for the per-kernel tables (default: resnet50,bert; "
                        "'none' for none)")
    p.add_argument("--kernel-dumps", type=int, default=None,
                   help="kiln debug invocations per model and thread count, median taken (1)")
    p.add_argument("--kernel-repeat", type=int, default=None,
                   help="timed runs inside each kiln debug (after 2 warm-up runs); each "
                        "kernel's time is its median (20; --quick: 3)")
    p.add_argument("--out", default=os.path.join(REPO, "docs", "performance.md"),
                   help="the Markdown report (docs/performance.md)")
    p.add_argument("--work-dir", default=os.environ.get("KILN_BENCH_DIR", "/tmp/kiln-bench"),
                   help="models, inputs, artifacts, dumps, results.json "
                        "($KILN_BENCH_DIR or /tmp/kiln-bench)")
    p.add_argument("--seed", type=int, default=0, help="weights and inputs (0)")
    p.add_argument("--tolerance", type=float, default=1e-3,
                   help="largest max-abs-error / max-|reference| that counts as a match")
    p.add_argument("--reexport", action="store_true", help="export the models again")
    p.add_argument("--quick", action="store_true",
                   help="a smoke test: 3 runs, 1 warm-up, one kiln debug per kernel table")
    a = p.parse_args(argv)
    a.models = [m.strip() for m in a.models.split(",") if m.strip()]
    if a.models == ["all"]:
        a.models = list(models.SPECS)
    bad = [m for m in a.models if m not in models.SPECS]
    if bad:
        p.error("unknown model(s) %s; known: %s" % (", ".join(bad), ", ".join(models.SPECS)))
    try:
        a.threads = [int(t) for t in a.threads.split(",") if t.strip()]
    except ValueError:
        p.error("--threads takes numbers, e.g. 1,2")
    if not a.threads or min(a.threads) < 1:
        p.error("--threads takes positive numbers, e.g. 1,2")
    if a.runs is None:
        a.runs = 3 if a.quick else 40
    if a.quick:
        a.rounds = 1
    if a.warmup is None:
        a.warmup = 1 if a.quick else 5
    if a.kernel_dumps is None:
        a.kernel_dumps = 1
    if a.kernel_repeat is None:
        a.kernel_repeat = 3 if a.quick else 20
    if (a.runs < 1 or a.warmup < 1 or a.kernel_dumps < 1 or a.kernel_repeat < 1 or
            a.rounds < 1):
        p.error("--runs, --warmup, --rounds and --kernel-dumps must be at least 1")
    if a.kernels is None:
        a.kernels = [m for m in a.models if models.SPECS[m].per_kernel]
    elif a.kernels.strip() == "none":
        a.kernels = []
    else:
        a.kernels = [m.strip() for m in a.kernels.split(",") if m.strip()]
        bad = [m for m in a.kernels if m not in a.models]
        if bad:
            p.error("--kernels %s: not among --models" % ", ".join(bad))
    if not (os.path.isfile(a.kiln) and os.access(a.kiln, os.X_OK)):
        p.error("--kiln %s: not an executable file" % a.kiln)
    a.kiln = os.path.abspath(a.kiln)
    a.work_dir = os.path.abspath(a.work_dir)
    return a


def versions():
    v = {"python": platform.python_version()}
    for mod in ("onnxruntime", "numpy", "torch", "torchvision", "onnx"):
        try:
            v[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - any import failure: not reported
            v[mod] = None
    try:
        head = run(["git", "-C", REPO, "rev-parse", "--short=12", "HEAD"]).stdout.strip()
        dirty = run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"]).stdout
        v["kiln_commit"] = head + (" (with uncommitted changes)" if dirty.strip() else "")
    except (CommandError, OSError):
        v["kiln_commit"] = None
    return v


def measure_model(a, name, res):
    spec = models.SPECS[name]
    m = {"name": name, "title": spec.title, "error": None, "stage": "ONNX export", "timing": {}}
    res["models"].append(m)
    try:
        onnx_path, export_s = ensure_exported(name, a.work_dir, a.seed, a.reexport)
        m["export_s"] = export_s
        feeds, input_args = write_inputs(spec, a.work_dir, a.seed)
        m["stage"] = "kiln compile"
        so_dir = os.path.join(a.work_dir, "kiln")
        os.makedirs(so_dir, exist_ok=True)
        so_path = os.path.join(so_dir, name + ".so")
        log("%s: kiln compile" % name)
        m["compile_s"], m["compile_detail"] = kiln_compile(a.kiln, onnx_path, so_path, spec)
        log("%s: compiled in %.2f s; checking outputs" % (name, m["compile_s"]))
        m["stage"] = "kiln run, output check"
        m["check"] = check_outputs(a.kiln, so_path, input_args, onnx_path, feeds,
                                   os.path.join(a.work_dir, "out", name), max(a.threads))
        m["match"] = m["check"]["max_rel"] <= a.tolerance
        if not m["match"]:
            log("%s: MISMATCH: max abs error %.3g, relative %.3g (tolerance %.3g)"
                % (name, m["check"]["max_abs"], m["check"]["max_rel"], a.tolerance))
        m["stage"] = "timing"
        for t in a.threads:
            # Alternate the two engines in rounds (kiln, ORT, kiln, ORT, ...)
            # so a slow spell of a shared machine falls on both; the medians
            # are over every round's runs.
            kraw, oraw, kmeans = [], [], []
            per_round = max(1, -(-a.runs // a.rounds))
            for _ in range(a.rounds):
                k = time_kiln(a.kiln, so_path, input_args, t, per_round, a.warmup)
                o = time_ort(onnx_path, feeds, t, per_round, a.warmup)
                kraw += k.get("raw", [])
                oraw += o["raw"]
                kmeans.append(k.get("kiln_mean"))
            k = summary(kraw) if kraw else k
            k["source"] = "median of runtime_raw" if kraw else k.get("source")
            k["kiln_mean"] = statistics.fmean([x for x in kmeans if x is not None]) \
                if any(x is not None for x in kmeans) else None
            o = summary(oraw)
            k["raw"], o["raw"] = kraw, oraw
            k["rounds"] = o["rounds"] = a.rounds
            m["timing"][t] = {"kiln": k, "ort": o}
            log("%s, %d thread%s: kiln %.2f ms, ONNX Runtime %.2f ms (medians of %d runs in %d rounds)"
                % (name, t, "" if t == 1 else "s", k["median"], o["median"], len(o["raw"]),
                   a.rounds))
        m["stage"] = "kiln debug"
        if name in a.kernels:
            m["kernels"] = {}
            for t in a.threads:
                log("%s: kiln debug x%d, %d thread%s" % (name, a.kernel_dumps, t,
                                                         "" if t == 1 else "s"))
                ks = kernel_profile(a.kiln, so_path, input_args, t, a.kernel_dumps, a.kernel_repeat,
                                    a.work_dir, name)
                m["kernels"][t] = [vars(k) | {"time_us": k.time_us} for k in ks]
        m["stage"] = None
    except CommandError as e:
        m["error"] = "`%s` failed (exit %d): %s" % (" ".join(e.cmd[:2]), e.returncode,
                                                     e.output[-1500:])
        log("%s: %s" % (name, m["error"]))
    except Exception as e:  # noqa: BLE001 - one model's failure must not stop the rest
        m["error"] = "%s: %s" % (type(e).__name__, e)
        log("%s: %s" % (name, m["error"]))


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.work_dir, exist_ok=True)
    command = os.environ.get("KILN_BENCH_COMMAND") or shlex.join(
        ["tools/bench/compare_ort.py", *argv])
    res = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "kiln": a.kiln,
        "load_before": os.getloadavg(),
        "cpu": cpu_info(),
        "versions": versions(),
        "runs": a.runs, "warmup": a.warmup, "threads": a.threads, "seed": a.seed,
        "kernel_dumps": a.kernel_dumps, "kernel_repeat": a.kernel_repeat, "tolerance": a.tolerance, "quick": a.quick,
        "rounds": a.rounds,
        "models": [],
    }
    log("machine: %s, %s; load average %.2f" % (res["cpu"]["model"], res["cpu"]["isa"],
                                                res["load_before"][0]))
    res["fma_peak"] = fma_peaks(a.work_dir, a.threads)
    for name in a.models:
        measure_model(a, name, res)
    res["load_after"] = os.getloadavg()
    res["fma_peak"] = fma_peaks(a.work_dir, a.threads, before=res["fma_peak"])
    with open(os.path.join(a.work_dir, "results.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)
    text = report.render(res)
    out_dir = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(out_dir, exist_ok=True)
    with open(a.out, "w") as f:
        f.write(text)
    log("wrote %s and %s" % (a.out, os.path.join(a.work_dir, "results.json")))
    print(report.summary_table(res))
    failed = [m["name"] for m in res["models"] if m["error"] or not m.get("match", False)]
    if failed:
        log("problems with: %s (see the report)" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
