#!/usr/bin/env python3
"""Per-component benchmarks of kiln, stored and checked as ratios.

Runs every benchmark binary of the repository (the Google Benchmark `*_bench`
targets, the runtime's C benchmarks) and `kiln compile` + `kiln bench` on the
example models, and writes each figure as one JSON line in TVM's benchmark-log
format v0.1 (as `kiln bench` does). Machines differ and are noisy, so every
figure is also divided by a reference measured in the same run:

  - fma_peak   (tools/bench/fma_peak.c, 1 thread): the time the machine needs
               for 1 GFLOP at its fp32 FMA peak. For generated-kernel figures
               (GEMM, dense, convolutions, a compiled model's run).
  - scalar_ref (tools/bench/scalar_ref.c): a fixed pass of branchy scanning,
               hashing and table updates. For everything the compiler and the
               runtime do themselves (parsing, passes, lowering, LLVM, loading,
               the executor, the thread pool).

The ratios are compared with a baseline stored in the repository
(tools/bench/baselines/components.<build>.json): a figure more than
--report (10%) slower than its baseline ratio is reported by name with both
figures; with --check, one more than --fail (see docs/benchmarks.md for the
noise this threshold sits above) makes the run fail.

  components.py --bin-dir BAZEL_BIN --kiln KILN --build fastbuild --short --check
  components.py ... --update-baseline          (a deliberate new baseline)

Only the Python standard library; the references are compiled with `cc`.
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# (component, kind, short-mode filter). kind: "gbench" (Google Benchmark),
# "threadpool" or "executor" (the runtime's C benchmarks, own output).
BENCHES = [
    ("ir:text_bench", "gbench", None),
    ("types:infer_type_bench", "gbench", None),
    ("passes:pipeline_bench", "gbench", "ParamWeights"),
    ("lowering/arith:analyzer_bench", "gbench", None),
    ("lowering:graph_plan_bench", "gbench", None),
    ("frontends/onnx:importer_bench", "gbench", "BM_ImportResNet50/16$"),
    ("codegen_llvm:codegen_bench", "gbench", None),
    ("tests/compiled:compile_bench", "gbench",
     "BM_FmaPeak/1$|BM_GemmConstWeight/1/128/768/768$|BM_DensePacked1024/1$|"
     "BM_ResNet50Conv/1/512/512"),
    ("tests/artifact:artifact_bench", "gbench", "Chain"),
    ("runtime_c:threadpool_bench", "threadpool", None),
    ("runtime_c:executor_bench", "executor", None),
]

# Figures of generated kernels: divided by the FMA-peak time.
FMA_FIGURES = re.compile(r"Gemm|Dense|Conv|FmaPeak|Sgemm|/run$")

EXAMPLES = ["examples/resnet_block.kir", "examples/mobilenet_block.kir",
            "examples/transformer_block.kir", "examples/resnet_mini.onnx"]


def log(msg):
    print("[components] " + msg, file=sys.stderr, flush=True)


def run(cmd, cwd=None, timeout=900):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (" ".join(cmd), p.returncode,
                                                    p.stdout[-2000:], p.stderr[-2000:]))
    return p


def binary_path(bin_dir, component):
    pkg, name = component.split(":")
    return os.path.join(bin_dir, pkg, name)


def runfiles_dir(exe):
    d = exe + ".runfiles"
    for ws in ("kiln", "__main__"):
        if os.path.isdir(os.path.join(d, ws)):
            return os.path.join(d, ws)
    return REPO


# --------------------------------------------------------------------------
# References


def references(work):
    cc = os.environ.get("CC", "cc")
    fma = os.path.join(work, "fma_peak")
    ref = os.path.join(work, "scalar_ref")
    run([cc, "-O2", "-march=native", "-pthread", os.path.join(HERE, "fma_peak.c"), "-o", fma,
         "-lm"])
    run([cc, "-O2", os.path.join(HERE, "scalar_ref.c"), "-o", ref])
    gflops = json.loads(run([fma, "1"]).stdout.strip().splitlines()[-1])["gflops"]
    scalar_ms = float(run([ref, "5"]).stdout.split()[-1])
    return {"fma_peak": 1000.0 / gflops, "scalar_ref": scalar_ms, "fma_gflops": gflops}


def measure_references(work, before=None):
    """The best of this measurement and `before`: other work on the machine
    can only make a reference slower."""
    r = references(work)
    if before is not None:
        for k in ("fma_peak", "scalar_ref"):
            r[k] = min(r[k], before[k])
        r["fma_gflops"] = 1000.0 / r["fma_peak"]
    return r


# --------------------------------------------------------------------------
# Benchmarks -> {figure name: (ms, std ms)}

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def stats(values):
    return {"median": statistics.median(values), "mean": statistics.fmean(values),
            "std": statistics.pstdev(values)}


def run_gbench(exe, flt, short, repetitions, work, override=None):
    out = os.path.join(work, os.path.basename(exe) + ".json")
    cmd = [exe, "--benchmark_out=" + out, "--benchmark_out_format=json",
           "--benchmark_repetitions=%d" % repetitions, "--benchmark_format=console",
           "--benchmark_min_time=%s" % ("0.02" if short else "0.2")]
    if repetitions > 1:
        cmd.append("--benchmark_report_aggregates_only=true")
    if override:
        cmd.append("--benchmark_filter=" + override)
    elif flt and short:
        cmd.append("--benchmark_filter=" + flt)
    run(cmd, cwd=runfiles_dir(exe))
    with open(out) as f:
        data = json.load(f)
    figures = {}
    for b in data.get("benchmarks", []):
        name = b.get("run_name") or b["name"]
        agg = b.get("aggregate_name")
        scale = UNIT_MS[b.get("time_unit", "ns")]
        if agg not in (None, "median", "mean", "stddev"):
            continue
        entry = figures.setdefault(name, {"median": None, "mean": None, "std": 0.0})
        t = b["real_time"] * scale
        if agg is None:  # one repetition: it is every statistic
            entry.update(median=t, mean=t)
        else:
            entry["std" if agg == "stddev" else agg] = t
    return {k: v for k, v in figures.items() if v["median"] is not None}


def run_threadpool(exe, short, repetitions):
    figures = {}
    for _ in range(repetitions):
        p = run([exe, "--launches=%d" % (2000 if short else 20000)])
        for m in re.finditer(r"threads=(\d+)\s+tasks=(\d+)\s+launches=\d+\s+([\d.]+) us/launch",
                             p.stdout):
            figures.setdefault("launch/threads=%s/tasks=%s" % (m.group(1), m.group(2)),
                               []).append(float(m.group(3)) / 1000.0)
    return {k: stats(v) for k, v in figures.items()}


def run_executor(exe, bin_dir, short, repetitions):
    chain = os.path.join(bin_dir, "runtime_c", "rt_chain.so")
    figures = {"load": [], "run": []}
    for _ in range(repetitions):
        p = run([exe, chain, "--runs=%d" % (2000 if short else 20000),
                 "--loads=%d" % (5 if short else 20)])
        load = re.search(r"load:\s+([\d.]+) ms mean", p.stdout)
        rn = re.search(r"run:\s+([\d.]+) us mean", p.stdout)
        if not load or not rn:
            raise RuntimeError("executor_bench: unexpected output:\n" + p.stdout)
        figures["load"].append(float(load.group(1)))
        figures["run"].append(float(rn.group(1)) / 1000.0)
    return {k: stats(v) for k, v in figures.items()}


def run_examples(kiln, short, repetitions, work):
    figures = {}
    for model in EXAMPLES:
        stem = os.path.splitext(os.path.basename(model))[0]
        so = os.path.join(work, stem + ".so")
        times = []
        for _ in range(repetitions):
            t = run([kiln, "compile", os.path.join(REPO, model), "-o", so, "--timing"])
            m = re.search(r"passes ([\d.]+) ms, lowering ([\d.]+) ms, plan ([\d.]+) ms, "
                          r"codegen ([\d.]+) ms, link ([\d.]+) ms", t.stderr)
            if not m:
                raise RuntimeError("kiln compile --timing: unexpected output:\n" + t.stderr)
            times.append([float(x) for x in m.groups()])
        for i, phase in enumerate(["passes", "lowering", "plan", "codegen", "link"]):
            if phase == "plan":
                continue  # well under a millisecond: noise
            v = [t[i] for t in times]
            figures["%s/compile/%s" % (stem, phase)] = stats(v)
        raw = []
        for _ in range(repetitions):
            p = run([kiln, "bench", so, "--threads", "1", "--warmup", "3",
                     "--repeat", "20" if short else "200"])
            line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
            raw += [r["runtime_ms"] for r in json.loads(line)["runtime_raw"]]
        figures["%s/run" % stem] = stats(raw)
    return figures


# --------------------------------------------------------------------------


def measure(a, work):
    refs = measure_references(work)
    log("references: FMA peak %.1f GFLOP/s (1 GFLOP in %.3f ms), scalar_ref %.3f ms"
        % (refs["fma_gflops"], refs["fma_peak"], refs["scalar_ref"]))
    figures = {}  # "component/benchmark" -> {median, mean, std} in ms
    known = {c for c, _, _ in BENCHES}
    extra = [(c, "gbench", None) for c in a.only if c not in known and c != "examples"]
    for component, kind, flt in BENCHES + extra:
        if a.only and component not in a.only:
            continue
        exe = binary_path(a.bin_dir, component)
        name_as = a.as_name.get(component, component)
        if not os.path.exists(exe):
            log("%s: %s not built; skipped" % (component, exe))
            continue
        log("%s ..." % component)
        if kind == "gbench":
            got = run_gbench(exe, flt, a.short, a.repetitions, work, a.filter)
        elif kind == "threadpool":
            got = run_threadpool(exe, a.short, a.repetitions)
        else:
            got = run_executor(exe, a.bin_dir, a.short, a.repetitions)
        for k, v in got.items():
            figures["%s/%s" % (name_as, k)] = v
    if a.kiln and (not a.only or "examples" in a.only):
        log("examples (kiln compile, kiln bench) ...")
        for k, v in run_examples(a.kiln, a.short, a.repetitions, work).items():
            figures["examples/%s" % k] = v
    # The references again: the better of the two measurements.
    refs = measure_references(work, refs)
    records = []
    now = datetime.datetime.now(datetime.timezone.utc).isoformat()
    for name in sorted(figures):
        f = figures[name]
        ms = f["median"]
        ref = "fma_peak" if FMA_FIGURES.search(name) else "scalar_ref"
        records.append({
            "workload": name, "engine": "kiln", "hardware": "cpu",
            "runtime_ms_mean": f["mean"], "runtime_ms_std": f["std"], "runtime_ms_median": ms,
            "timestamp": now,
            "schema_version": "0.1",
            "hardware_config": {"cpu_count": os.cpu_count(), "arch": platform.machine()},
            "execution_config": {"mode": "short" if a.short else "full",
                                 "repetitions": a.repetitions},
            "metadata": {"build": a.build, "reference": ref, "reference_ms": refs[ref],
                         "ratio": ms / refs[ref]},
        })
    return records, refs


def load_baseline(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


# Figures shorter than this (a thread-pool launch, one executor run of a
# 1,000-node chain) vary by several times between short runs on a shared
# machine: they are reported, never a failure.
MIN_CHECKED_MS = 0.05


def compare(records, baseline, report, fail):
    """(lines, failed): every figure more than `report` slower than its
    baseline ratio, and the names of those more than `fail` slower (figures
    under MIN_CHECKED_MS excepted)."""
    base = baseline.get("ratios", {}) if baseline else {}
    lines, failed = [], []
    seen = set()
    for r in records:
        name = r["workload"]
        seen.add(name)
        ratio = r["metadata"]["ratio"]
        if name not in base:
            lines.append("NEW      %s: ratio %.4g (no baseline)" % (name, ratio))
            continue
        change = ratio / base[name]
        if change > 1 + report:
            over = change > 1 + fail and r["runtime_ms_median"] >= MIN_CHECKED_MS
            lines.append("%s %s: %.4g ms, ratio %.4g vs baseline %.4g: %.2fx slower%s"
                         % ("FAIL    " if over else "SLOWER  ", name, r["runtime_ms_median"],
                            ratio, base[name], change,
                            " (beyond the %.0f%% threshold)" % (100 * fail) if over else ""))
            if over:
                failed.append(name)
        elif change < 1 - report:
            lines.append("faster   %s: ratio %.4g vs baseline %.4g: %.2fx"
                         % (name, ratio, base[name], change))
    for name in sorted(set(base) - seen):
        lines.append("MISSING  %s: in the baseline, not measured in this run" % name)
    return lines, failed


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--print-targets", action="store_true",
                   help="print the Bazel targets the measurement needs, and exit")
    p.add_argument("--bin-dir", help="bazel-bin of the build to measure")
    p.add_argument("--kiln", help="the kiln binary (examples: compile + bench); omit to skip")
    p.add_argument("--build", default="fastbuild", help="the build's compilation mode "
                   "(fastbuild or opt): selects the baseline file")
    p.add_argument("--short", action="store_true", help="CI mode: short runs, filtered")
    p.add_argument("--repetitions", type=int, default=None, help="per figure (3 short, 5 full)")
    p.add_argument("--only", default="", help="comma-separated components (and/or 'examples')")
    p.add_argument("--filter", help="a --benchmark_filter for every Google Benchmark binary "
                   "(replaces the short mode's own)")
    p.add_argument("--as", dest="as_name", action="append", default=[],
                   help="COMPONENT=NAME: report COMPONENT's figures under NAME (tests)")
    p.add_argument("--baseline", help="baseline file (default tools/bench/baselines/"
                   "components.<build>.json)")
    p.add_argument("--out", help="write the JSON lines here (default: stdout)")
    p.add_argument("--check", action="store_true", help="fail beyond --fail")
    p.add_argument("--update-baseline", action="store_true",
                   help="write this run's ratios as the new baseline")
    p.add_argument("--report", type=float, default=0.10, help="report figures slower by more "
                   "than this fraction (0.10)")
    p.add_argument("--fail", type=float, default=1.0, help="with --check, fail on figures "
                   "slower by more than this fraction (1.0: 2x; docs/benchmarks.md)")
    p.add_argument("--work-dir", default=None)
    a = p.parse_args()
    if a.print_targets:
        for component, _, _ in BENCHES:
            print("//" + component)
        print("//runtime_c:rt_chain")  # executor_bench's graph
        print("//tools:kiln")
        return 0
    if not a.bin_dir:
        p.error("--bin-dir is required")
    a.bin_dir = os.path.abspath(a.bin_dir)
    if a.kiln:
        a.kiln = os.path.abspath(a.kiln)
    a.only = [x for x in a.only.split(",") if x]
    a.as_name = dict(x.split("=", 1) for x in a.as_name)
    if a.repetitions is None:
        a.repetitions = 3 if a.short else 5
    baseline_path = a.baseline or os.path.join(HERE, "baselines", "components.%s.json" % a.build)
    work = a.work_dir or tempfile.mkdtemp(prefix="kiln_components_")
    os.makedirs(work, exist_ok=True)

    records, refs = measure(a, work)
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
        log("wrote %d figures to %s" % (len(records), a.out))
    else:
        sys.stdout.write(text)

    baseline = load_baseline(baseline_path)
    lines, failed = compare(records, baseline, a.report, a.fail)
    if baseline is None:
        log("no baseline at %s" % baseline_path)
    for l in lines:
        print(l, file=sys.stderr)
    log("%d figures; %d more than %.0f%% slower than the baseline ratio, %d beyond the %.0f%% "
        "threshold" % (len(records), sum(1 for l in lines if l.startswith(("SLOWER", "FAIL"))),
                       100 * a.report, len(failed), 100 * a.fail))
    if a.update_baseline:
        out = {"build": a.build, "mode": "short" if a.short else "full",
               "measured": datetime.datetime.now(datetime.timezone.utc).isoformat(),
               "machine": "%s, %d CPUs; FMA peak %.1f GFLOP/s, scalar_ref %.3f ms"
                          % (platform.processor() or platform.machine(), os.cpu_count(),
                             refs["fma_gflops"], refs["scalar_ref"]),
               "ratios": {r["workload"]: r["metadata"]["ratio"] for r in records}}
        if baseline and not a.only:
            pass  # a full update replaces the file
        elif baseline and a.only:
            merged = dict(baseline.get("ratios", {}))
            merged.update(out["ratios"])
            out["ratios"] = merged
        os.makedirs(os.path.dirname(baseline_path), exist_ok=True)
        with open(baseline_path, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")
        log("wrote the baseline %s" % baseline_path)
    if a.check and failed:
        log("FAILED: %s" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
