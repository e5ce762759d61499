"""The Markdown report of tools/bench/compare_ort.py (docs/performance.md).

    render(results) -> the whole document
    summary_table(results) -> the speed tables alone, for the terminal

`results` is the dict compare_ort.py also writes to WORK/results.json.
"""
TOP_KERNELS = 15
LOADED = 0.5  # a load average above this before the run: the figures are noisy


def _ms(x):
    if x is None:
        return "-"
    return "%.2f" % x if x < 100 else "%.1f" % x


def _plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def _error_cell(m, tolerance):
    c = m.get("check")
    if c is None:
        return "-"
    text = "%.1e (rel %.1e)" % (c["max_abs"], c["max_rel"])
    if c["max_rel"] > tolerance:
        return "**MISMATCH** %s" % text
    return text


def speed_table(res, t):
    rows = ["| model | kiln ms (median) | ORT ms (median) | kiln/ORT | compile s | max error |",
            "|---|---|---|---|---|---|"]
    for m in res["models"]:
        tm = m["timing"].get(t) or m["timing"].get(str(t))
        if m["error"] and not tm:
            compile_s = "%.2f" % m["compile_s"] if "compile_s" in m else "-"
            rows.append("| %s | **FAILED** (%s) | | | %s | %s |"
                        % (m["title"], m.get("stage") or "?", compile_s,
                           _error_cell(m, res["tolerance"])))
            continue
        k, o = tm["kiln"]["median"], tm["ort"]["median"]
        ratio = "%.2fx" % (k / o) if k and o else "-"
        kcell = _ms(k)
        if tm["kiln"].get("runs", 0) == 0:
            kcell += " (mean: `kiln bench` gave no runtime_raw)"
        rows.append("| %s | %s | %s | %s | %.2f | %s |"
                    % (m["title"], kcell, _ms(o), ratio, m["compile_s"],
                       _error_cell(m, res["tolerance"])))
    return "\n".join(rows)


def summary_table(res):
    parts = []
    for t in res["threads"]:
        parts.append("%s:\n%s" % (_plural(t, "thread"), speed_table(res, t)))
    return "\n\n".join(parts)


def _kernel_rows(ks, total_us, peak):
    rows = ["| # | kernel | ops | output | time us | % of run | GFLOP | GFLOP/s | % of peak |",
            "|---|---|---|---|---|---|---|---|---|"]
    for i, k in ks:
        gflop = k["flops"] / 1e9
        rate = k["flops"] / (k["time_us"] * 1e3) if k["flops"] and k["time_us"] else 0.0
        rows.append("| %d | %s | %s | %s | %.1f | %.1f | %s | %s | %s |" % (
            i, k["name"], k["ops"].replace(",", ", "), "x".join(map(str, k["out_shape"])),
            k["time_us"], 100.0 * k["time_us"] / total_us if total_us else 0.0,
            "%.3f" % gflop if gflop else "-", "%.1f" % rate if rate else "-",
            "%.1f" % (100.0 * rate / peak) if rate and peak else "-"))
    return rows


def _family(k):
    names = k["ops"].split(",")
    for main in ("nn.conv2d", "nn.dense", "nn.matmul", "nn.batch_matmul"):
        if main in names:
            return main
    return names[0] if names and names[0] else "?"


def kernel_section(res, m, t):
    ks = m["kernels"].get(t) or m["kernels"].get(str(t))
    peak = res["fma_peak"].get(t, res["fma_peak"].get(str(t), {})).get("gflops")
    total = sum(k["time_us"] for k in ks)
    flops = sum(k["flops"] for k in ks)
    tm = m["timing"].get(t) or m["timing"].get(str(t)) or {}
    bench = tm.get("kiln", {}).get("median")
    out = ["### %s, %s" % (m["title"], _plural(t, "thread")), ""]
    out.append(
        "%d kernel calls; sum of kernel times %.2f ms (median of %s per kernel, "
        "after 2 warm-up runs; "
        "`kiln bench` median %s ms); %.2f GFLOP counted; %.1f GFLOP/s overall, %s of the "
        "%s-core FMA peak (%.1f GFLOP/s)."
        % (len(ks), total / 1e3,
           _plural(res.get("kernel_repeat", 1) * res["kernel_dumps"], "timed `kiln debug` run"),
           _ms(bench), flops / 1e9, flops / (total * 1e3) if total else 0.0,
           "%.1f%%" % (100.0 * flops / (total * 1e3) / peak) if total and peak else "-",
           t, peak or 0.0))
    out.append("")
    fam = {}
    for k in ks:
        f = fam.setdefault(_family(k), [0, 0.0, 0.0])
        f[0] += 1
        f[1] += k["time_us"]
        f[2] += k["flops"]
    out += ["| operator | kernels | time ms | % of run | GFLOP/s | % of peak |",
            "|---|---|---|---|---|---|"]
    for name, (n, us, fl) in sorted(fam.items(), key=lambda x: -x[1][1]):
        rate = fl / (us * 1e3) if fl and us else 0.0
        out.append("| %s | %d | %.2f | %.1f | %s | %s |" % (
            name, n, us / 1e3, 100.0 * us / total if total else 0.0,
            "%.1f" % rate if rate else "-",
            "%.1f" % (100.0 * rate / peak) if rate and peak else "-"))
    out += ["", "Top %d kernels by time:" % min(TOP_KERNELS, len(ks)), ""]
    ranked = sorted(enumerate(ks, 1), key=lambda x: -x[1]["time_us"])
    out += _kernel_rows(ranked[:TOP_KERNELS], total, peak)
    out += ["", "<details><summary>All %d kernel calls, in execution order, with the shapes "
            "their FLOPs come from</summary>" % len(ks), ""]
    out += _kernel_rows(list(enumerate(ks, 1)), total, peak)
    out += ["", "| # | FLOPs from |", "|---|---|"]
    out += ["| %d | `%s` |" % (i, k["basis"].replace("|", "\\|"))
            for i, k in enumerate(ks, 1) if k["basis"]]
    out += ["", "</details>", ""]
    return out


def render(res):
    cpu, v, peaks = res["cpu"], res["versions"], res["fma_peak"]
    loaded = res["load_before"][0] > LOADED
    out = ["# Performance: kiln against ONNX Runtime", ""]
    out.append("Produced by `%s` on %s." % (res["command"], res["date"]))
    if res["quick"]:
        out += ["", "**A --quick smoke test: %s per figure, not a measurement.**"
                % _plural(res["runs"], "run")]
    if loaded:
        out += ["", "**The machine was not idle (load average %.2f when the run started, %.2f "
                "at its end; other work, or a run just before): the figures may be noisy.**"
                % (res["load_before"][0], res["load_after"][0])]
    p1, p2 = peaks.get(1, peaks.get("1", {})), peaks.get(2, peaks.get("2", {}))
    out += ["", "## Machine", ""]
    fam = ""
    if cpu.get("family"):
        fam = " (CPU family %s, model %s)" % (cpu["family"], cpu.get("model_number", "?"))
    out.append("- CPU: %s%s, %d logical CPUs, Linux %s" % (cpu["model"], fam, cpu["cpus"] or 0,
                                                           cpu["kernel"]))
    out.append("- Vector ISA: %s" % cpu["isa"])
    out.append("- fp32 FMA peak (`tools/bench/fma_peak.c`: %s, %d lanes, %d independent "
               "accumulators per thread, best of 5 rounds): **%.1f GFLOP/s on 1 core, %.1f on "
               "2 cores**" % (p1.get("isa", "?"), p1.get("lanes", 0), p1.get("accumulators", 0),
                              p1.get("gflops", 0.0), p2.get("gflops", 0.0)))
    extra = sorted(int(t) for t in peaks if int(t) not in (1, 2))
    for t in extra:
        out.append("- FMA peak on %d cores: %.1f GFLOP/s" % (t, peaks[t]["gflops"]))
    out.append("  (each the larger of two measurements, at the start and at the end of the run: "
               "%s)" % "; ".join("%s: %s" % (_plural(int(t), "core"),
                                              " and ".join("%.1f" % g for g in p["measured"]))
                                 for t, p in sorted(peaks.items(), key=lambda x: int(x[0]))))
    for t, p in sorted(peaks.items(), key=lambda x: int(x[0])):
        if 1 < int(t) <= (cpu["cpus"] or 1) and p["gflops"] < 0.8 * int(t) * p1.get("gflops", 0):
            out.append("- **The %s peak is below %d x 80%% of the 1-core one: the machine was "
                       "busy while it was measured, and %% of peak figures for %s are too "
                       "high.**" % (_plural(int(t), "core"), int(t), _plural(int(t), "thread")))
    out.append("- Load average: %.2f before the run, %.2f after" % (res["load_before"][0],
                                                                  res["load_after"][0]))
    out.append("- Software: kiln %s (`%s`), ONNX Runtime %s (PyPI, CPU provider), PyTorch %s, "
               "torchvision %s, ONNX %s, NumPy %s, Python %s"
               % (v.get("kiln_commit") or "?", res["kiln"], v.get("onnxruntime"), v.get("torch"),
                  v.get("torchvision"), v.get("onnx"), v.get("numpy"), v.get("python")))
    out += ["", "## How it is measured", ""]
    out += [
        "- Models (`tools/bench/models.py`): torchvision ResNet-50, ResNet-18, MobileNetV2, "
        "SqueezeNet 1.1 and EfficientNet-B0 (input 1x3x224x224), and a BERT-base encoder with "
        "4 layers (sequence 128, hidden 768, 12 heads, FFN 3072, int64 token ids in), random "
        "weights (seed %d; BatchNorm statistics measured on random images), exported with "
        "`torch.onnx.export` at opset 13, batch 1, fp32, static shapes. Both engines get the "
        "same random input." % res.get("seed", 0),
        "- Each thread count, per model, in this one process, the two engines alternating in "
        "%d rounds (kiln, ONNX Runtime, kiln, ...; %d timed runs each in all, split between "
        "the rounds, %d warm-up runs per round): `kiln bench MODEL.so --repeat R --warmup %d "
        "--threads T` (its per-run times, `runtime_raw`), and ONNX Runtime "
        "(`intra_op_num_threads=T`, `inter_op_num_threads=1`, `ORT_ENABLE_ALL`, "
        "`ORT_SEQUENTIAL`; timed `InferenceSession.run` calls from Python, so its figures "
        "include the ~10-20 us of Python per call). The medians are over all rounds' runs."
        % (res.get("rounds", 1), res["runs"], res["warmup"], res["warmup"]),
        "- compile s: the wall time of `kiln compile MODEL.onnx -o MODEL.so` (import, passes, "
        "lowering, LLVM, link, writing the .so).",
        "- max error: the largest |kiln - ONNX Runtime| over all outputs, and that divided by "
        "the largest |ONNX Runtime output| (rel); above %.0e relative the row says "
        "**MISMATCH**." % res["tolerance"],
    ]
    for t in res["threads"]:
        out += ["", "## %s" % _plural(t, "thread"), "", speed_table(res, t), ""]
    kernel_models = [m for m in res["models"] if m.get("kernels")]
    if kernel_models:
        out += ["", "## Per kernel", "",
                "From `kiln debug MODEL.so --dump-dir DIR --threads T --warmup 2 --repeat N "
                "--no-tensors` (graph.json: every kernel's op names and its inputs' and "
                "output's shapes; trace.json: each kernel call's median time over the N "
                "timed runs). FLOPs "
                "(`tools/bench/kernels.py`): conv2d `2*N*OH*OW*|W|` "
                "(= `2*N*OC*OH*OW*IC/groups*KH*KW`), "
                "dense/matmul/batch_matmul `2*M*N*K`; every other operator (elementwise, "
                "layout_transform, pooling, softmax, reductions) counts 0 and shows \"-\". "
                "% of peak is against the measured FMA peak for the same number of cores. "
                "Winograd kernels (3x3 stride-1 convolutions) are counted as the direct "
                "convolution they replace, which does 2.25x their multiply-adds: their "
                "GFLOP/s, and a model's overall figure, can exceed the peak.", ""]
        for m in kernel_models:
            for t in res["threads"]:
                out += kernel_section(res, m, t)
    out += ["", "## Details", ""]
    for m in res["models"]:
        line = "- %s:" % m["title"]
        if m.get("compile_detail"):
            line += " compile: %s." % m["compile_detail"]
        for t in res["threads"]:
            tm = m["timing"].get(t) or m["timing"].get(str(t))
            if not tm:
                continue
            k, o = tm["kiln"], tm["ort"]
            line += (" %s: kiln mean %s / min %s / max %s ms, ORT mean %s / min %s / max %s ms."
                     % (_plural(t, "thread"), _ms(k.get("mean")), _ms(k.get("min")),
                        _ms(k.get("max")), _ms(o["mean"]), _ms(o["min"]), _ms(o["max"])))
        if m["error"]:
            line += " failed at %s: see Problems." % m.get("stage")
        out.append(line)
    failed = [m for m in res["models"] if m["error"]]
    if failed:
        out += ["", "## Problems", ""]
        for m in failed:
            out.append("- **%s**:" % m["title"])
            out += ["", "  ```"] + ["  " + l for l in m["error"].splitlines()] + ["  ```", ""]
    text = "\n".join(out).rstrip() + "\n"
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text
