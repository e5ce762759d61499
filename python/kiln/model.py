"""kiln.model: a model in kiln's graph IR (KilnModel): import, optimize, compile.

    model = kiln.load_onnx("resnet.onnx", input_shapes={"input": (1, 3, 224, 224)})
    model = model.optimize(opt_level=3)           # optional: compile runs the passes too
    report = model.compile("resnet.so", target="llvm -mcpu=native")
    artifact = kiln.Artifact("resnet.so")

A Model is immutable and may be shared by threads; every method returns a new
object. These functions need libkiln.so (the compiler): with only
libkiln_runtime.so loaded they raise kiln.Error (UNIMPLEMENTED).
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Callable, Iterable, List, Mapping, Optional, Sequence, Union

from kiln import _capi
from kiln._dlpack import DLTensor
from kiln.errors import Error, StatusCode, check
from kiln.tensor import TensorInfo

PathLike = Union[str, "os.PathLike[str]"]
InputShapes = Mapping[str, Sequence[int]]

# Model.emit kinds (KilnEmitKind).
_EMIT_KINDS = {"graph": 0, "loop": 1, "llvm": 2, "asm": 3}


def _compiler() -> _capi.Library:
    lib = _capi.library()
    if not lib.has_compiler:
        raise Error(StatusCode.UNIMPLEMENTED,
                    "%s is the runtime-only library: importing, optimizing and compiling "
                    "models need libkiln.so (set KILN_LIBRARY to it)" % lib.path)
    return lib


def _path(p: PathLike) -> bytes:
    return os.fsencode(os.fspath(p))


def _strings(names: Iterable[str]):
    """(char** array, count, keep-alive) for a list of names."""
    encoded = [n.encode() for n in names]
    array = (ctypes.c_char_p * max(len(encoded), 1))(*encoded)
    return array, len(encoded), (array, encoded)


def _import_options(input_shapes: Optional[InputShapes], external_data_dir: Optional[PathLike]):
    lib = _compiler()
    opts = _capi.KilnImportOptions()
    lib.kiln_import_options_init(ctypes.byref(opts))
    keep: list = []
    if input_shapes:
        entries = (_capi.KilnInputShape * len(input_shapes))()
        for entry, (name, dims) in zip(entries, input_shapes.items()):
            dims = [int(d) for d in dims]
            arr = (ctypes.c_int64 * max(len(dims), 1))(*dims)
            name_b = name.encode()
            keep += [arr, name_b]
            entry.name, entry.ndim, entry.dims = name_b, len(dims), arr
        opts.input_shapes, opts.num_input_shapes = entries, len(input_shapes)
        keep.append(entries)
    if external_data_dir is not None:
        d = _path(external_data_dir)
        keep.append(d)
        opts.external_data_dir = d
    return opts, keep


def load_onnx(path: PathLike, input_shapes: Optional[InputShapes] = None,
              external_data_dir: Optional[PathLike] = None) -> "Model":
    """Imports an ONNX model file.

    input_shapes: static shapes for graph inputs by name, e.g.
        ``{"input": (1, 3, 224, 224)}``; inputs with symbolic dims need one
        before the model compiles.
    external_data_dir: where external-data files are (default: the model's
        directory).
    Raises kiln.Error: NOT_FOUND (no file), UNIMPLEMENTED (every unsupported
    operator listed), INVALID_ARGUMENT (a malformed model, a bad shape)."""
    lib = _compiler()
    opts, keep = _import_options(input_shapes, external_data_dir)
    out = _capi.Handle()
    check(lib, lib.kiln_model_load_onnx_file(_path(path), ctypes.byref(opts), ctypes.byref(out)))
    del keep
    return Model._adopt(lib, out)


def load_onnx_bytes(data: bytes, input_shapes: Optional[InputShapes] = None,
                    external_data_dir: Optional[PathLike] = None) -> "Model":
    """Imports an ONNX model from bytes in memory (as load_onnx)."""
    lib = _compiler()
    opts, keep = _import_options(input_shapes, external_data_dir)
    data = bytes(data)
    out = _capi.Handle()
    check(lib, lib.kiln_model_load_onnx_bytes(data, len(data), ctypes.byref(opts),
                                              ctypes.byref(out)))
    del keep
    return Model._adopt(lib, out)


def load(path: PathLike, input_shapes: Optional[InputShapes] = None) -> "Model":
    """Reads a model file: ONNX for a ``.onnx`` name (with input_shapes), kiln
    text IR (``.kir``) otherwise."""
    lib = _compiler()
    opts, keep = _import_options(input_shapes, None)
    out = _capi.Handle()
    check(lib, lib.kiln_model_load_file(_path(path), ctypes.byref(opts), ctypes.byref(out)))
    del keep
    return Model._adopt(lib, out)


def parse(text: str, source_name: Optional[str] = None) -> "Model":
    """Parses and type-checks kiln text IR (docs/text_format.md). Errors are
    kiln.Error (INVALID_ARGUMENT) with ``source:line:column`` in the message."""
    lib = _compiler()
    out = _capi.Handle()
    check(lib, lib.kiln_model_parse_text(text.encode(), None if source_name is None
                                         else source_name.encode(), ctypes.byref(out)))
    return Model._adopt(lib, out)


def passes() -> List[str]:
    """The registered graph pass names, sorted (for Model.optimize)."""
    lib = _compiler()
    return [_capi.text(lib.kiln_pass_name(i)) for i in range(lib.kiln_pass_count())]


@dataclass(frozen=True)
class PassEvent:
    """One pass that Model.optimize ran (its ``after_pass`` callback gets these)."""

    name: str
    changed: bool
    elapsed_ms: float
    text: Optional[str]  # the module after the pass, with after_pass_text=True


@dataclass(frozen=True)
class CompileReport:
    """What Model.compile did (KilnCompileReport): phase times in ms, kernel
    counts, the session arena with and without storage sharing, file size."""

    passes_ms: float
    lower_ms: float
    plan_ms: float
    codegen_ms: float
    link_ms: float
    num_fused_calls: int
    num_kernels: int
    arena_bytes: int
    naive_bytes: int
    file_bytes: int

    @staticmethod
    def _from(r: _capi.KilnCompileReport) -> "CompileReport":
        return CompileReport(r.passes_ms, r.lower_ms, r.plan_ms, r.codegen_ms, r.link_ms,
                             r.num_fused_calls, r.num_kernels, r.arena_bytes, r.naive_bytes,
                             r.file_bytes)


class Model:
    """A type-checked model (kiln's graph IR; ``main`` is the model). Made by
    kiln.load_onnx, kiln.load_onnx_bytes, kiln.load, kiln.parse and
    Model.optimize. Immutable and thread-safe."""

    def __init__(self) -> None:
        raise TypeError("use kiln.load_onnx, kiln.load or kiln.parse to make a Model")

    @classmethod
    def _adopt(cls, lib: _capi.Library, handle: _capi.Handle) -> "Model":
        self = object.__new__(cls)
        self._lib = lib
        self._handle = handle
        return self

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        """Releases the model now (otherwise when it is garbage). Idempotent."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.kiln_model_release(handle)

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _h(self) -> _capi.Handle:
        if not self._handle:
            raise Error(StatusCode.FAILED_PRECONDITION, "the model was closed")
        return self._handle

    # ---------------------------------------------------------------- views

    def text(self, show_types: bool = False) -> str:
        """The model as text IR (parses back with kiln.parse); with show_types
        every binding carries its inferred type."""
        out = ctypes.c_void_p()
        check(self._lib, self._lib.kiln_model_print(self._h(), 1 if show_types else 0,
                                                    ctypes.byref(out)))
        return _capi.take_string(self._lib, out)

    def __str__(self) -> str:
        return self.text()

    @property
    def warnings(self) -> List[str]:
        """What importing the model warned about (ONNX that ONNX Runtime also
        accepts with a warning), one line each; [] for text IR and optimized
        models. Needs a library with C ABI version 2 (UNIMPLEMENTED before)."""
        lib = self._lib
        if not hasattr(lib, "kiln_model_warnings"):
            raise Error(StatusCode.UNIMPLEMENTED, "%s (C ABI version %d) has no "
                        "kiln_model_warnings (version 2)" % (lib.path, lib.kiln_api_version()))
        out = ctypes.c_char_p()
        check(lib, lib.kiln_model_warnings(self._h(), ctypes.byref(out)))
        return [line for line in _capi.text(out.value).split("\n") if line]

    def to_dot(self) -> str:
        """``main`` as a Graphviz dot graph."""
        out = ctypes.c_void_p()
        check(self._lib, self._lib.kiln_model_to_dot(self._h(), ctypes.byref(out)))
        return _capi.take_string(self._lib, out)

    @property
    def inputs(self) -> List[TensorInfo]:
        """main's parameters: names, shapes (None: not static), dtypes."""
        lib, h = self._lib, self._h()
        n = ctypes.c_int32()
        check(lib, lib.kiln_model_num_inputs(h, ctypes.byref(n)))
        result = []
        for i in range(n.value):
            name, info = ctypes.c_char_p(), DLTensor()
            check(lib, lib.kiln_model_input_info(h, i, ctypes.byref(name), ctypes.byref(info)))
            result.append(TensorInfo.from_dl(_capi.text(name.value), info))
        return result

    @property
    def outputs(self) -> List[TensorInfo]:
        """main's results, flattened, with the names the compiled artifact
        gives them (the ONNX graph's output names, else output0, ...; None
        with a library older than C ABI version 3)."""
        lib, h = self._lib, self._h()
        n = ctypes.c_int32()
        check(lib, lib.kiln_model_num_outputs(h, ctypes.byref(n)))
        named = hasattr(lib, "kiln_model_output_name")
        result = []
        for i in range(n.value):
            info = DLTensor()
            check(lib, lib.kiln_model_output_info(h, i, ctypes.byref(info)))
            name: Optional[str] = None
            if named:
                out = ctypes.c_char_p()
                check(lib, lib.kiln_model_output_name(h, i, ctypes.byref(out)))
                name = _capi.text(out.value)
            result.append(TensorInfo.from_dl(name, info))
        return result

    def dim_names(self, index: int, output: bool = False) -> List[str]:
        """The dims of input (or output) `index` as the text IR writes them:
        "224", a symbolic dim's name ("N"), "?" for an unknown one."""
        lib, h = self._lib, self._h()
        fn = "kiln_model_output_dim_name" if output else "kiln_model_input_dim_name"
        if not hasattr(lib, fn):
            raise Error(StatusCode.UNIMPLEMENTED, "%s (C ABI version %d) has no %s (version 3)" %
                        (lib.path, lib.kiln_api_version(), fn))
        info = DLTensor()
        if output:
            check(lib, lib.kiln_model_output_info(h, index, ctypes.byref(info)))
        else:
            name = ctypes.c_char_p()
            check(lib, lib.kiln_model_input_info(h, index, ctypes.byref(name), ctypes.byref(info)))
        dims = []
        for axis in range(info.ndim):
            out = ctypes.c_char_p()
            check(lib, getattr(lib, fn)(h, index, axis, ctypes.byref(out)))
            dims.append(_capi.text(out.value))
        return dims

    # ------------------------------------------------------------- optimize

    def optimize(self, opt_level: int = 3, passes: Optional[Sequence[str]] = None,
                 required: Sequence[str] = (), disabled: Sequence[str] = (),
                 after_pass: Optional[Callable[[PassEvent], None]] = None,
                 after_pass_text: bool = False) -> "Model":
        """Runs graph passes and returns the optimized model (this one is unchanged).

        opt_level: 0-3, the default pipeline runs the passes at or below it.
        passes: an explicit pass list run in order instead (kiln.passes()
            names); None or empty: the default pipeline.
        required / disabled: passes run whatever the level / never run.
        after_pass: called after every pass with a PassEvent (the module text
            too when after_pass_text). An exception it raises stops nothing in
            C, but is raised again when optimize returns.
        Raises kiln.Error: NOT_FOUND for an unknown pass (listing the known
        ones), the failing pass's code otherwise."""
        lib = self._lib
        opts = _capi.KilnOptimizeOptions()
        lib.kiln_optimize_options_init(ctypes.byref(opts))
        opts.opt_level = opt_level
        keep = []
        if passes is not None:
            opts.passes, opts.num_passes, k = _strings(passes)
            keep.append(k)
        opts.required_passes, opts.num_required_passes, k = _strings(required)
        keep.append(k)
        opts.disabled_passes, opts.num_disabled_passes, k = _strings(disabled)
        keep.append(k)
        raised: List[BaseException] = []
        if after_pass is not None:
            def trampoline(_user, name, changed, elapsed_ms, module_text):
                if raised:
                    return
                try:
                    after_pass(PassEvent(_capi.text(name), bool(changed), elapsed_ms,
                                         None if module_text is None else _capi.text(module_text)))
                except BaseException as e:  # noqa: B036 (handed back after the C call)
                    raised.append(e)

            callback = _capi.KilnAfterPassFn(trampoline)
            keep.append(callback)
            opts.after_pass = callback
            opts.after_pass_text = 1 if after_pass_text else 0
        out = _capi.Handle()
        status = lib.kiln_model_optimize(self._h(), ctypes.byref(opts), ctypes.byref(out))
        result = None
        if not status:
            result = Model._adopt(lib, out)
        check(lib, status)
        if raised:
            raise raised[0]
        del keep
        return result

    # -------------------------------------------------------------- compile

    @staticmethod
    def _compile_options(target: Optional[str], opt_level: int, disabled_passes: Sequence[str],
                         memory_plan: bool, num_threads: int, cc: Optional[str]):
        opts = _capi.KilnCompileOptions()
        _compiler().kiln_compile_options_init(ctypes.byref(opts))
        keep: list = []
        if target is not None:
            keep.append(target.encode())
            opts.target = keep[-1]
        if cc is not None:
            keep.append(cc.encode())
            opts.cc = keep[-1]
        opts.opt_level = opt_level
        opts.disabled_passes, opts.num_disabled_passes, k = _strings(disabled_passes)
        keep.append(k)
        opts.no_memory_plan = 0 if memory_plan else 1
        opts.num_threads = num_threads
        return opts, keep

    def compile(self, path: PathLike, target: Optional[str] = None, opt_level: int = 3,
                disabled_passes: Sequence[str] = (), memory_plan: bool = True,
                num_threads: int = 0, cc: Optional[str] = None,
                progress: Optional[Callable[[str, int, int], None]] = None) -> CompileReport:
        """Compiles the model into an artifact (a .so) at `path`, written
        atomically; load it with kiln.Artifact(path).

        target: "llvm" (the host CPU, the default), "llvm -mcpu=skylake-avx512",
            "llvm -mtriple=aarch64-linux-gnu", ...
        opt_level: graph passes 0-3. disabled_passes: passes to skip.
        memory_plan: share storage between intermediates (default on).
        num_threads: code-generation threads (0: all CPUs).
        cc: the C compiler driver that links the .so (default "cc").
        progress: called as progress(phase, done, total): each phase's start
            ("passes", "lower", "plan", "codegen", "link") with done 0 (total:
            the kernel count for "codegen", else 0), then after each kernel's
            machine code with done = kernels finished. It may run on a
            code-generation thread (kiln serializes the calls); an exception
            it raises is raised again when compile returns.
        Every input needs a static shape (load_onnx's input_shapes)."""
        lib = self._lib
        opts, keep = self._compile_options(target, opt_level, disabled_passes, memory_plan,
                                           num_threads, cc)
        raised: List[BaseException] = []
        if progress is not None:
            if lib.kiln_api_version() < 3:
                raise Error(StatusCode.UNIMPLEMENTED,
                            "%s (C ABI version %d) has no compile progress callback (version 3)"
                            % (lib.path, lib.kiln_api_version()))

            def trampoline(_user, phase, done, total):
                if raised:
                    return
                try:
                    progress(_capi.text(phase), int(done), int(total))
                except BaseException as e:  # noqa: B036 (handed back after the C call)
                    raised.append(e)

            callback = _capi.KilnCompileProgressFn(trampoline)
            keep.append(callback)
            opts.progress = callback
        report = _capi.KilnCompileReport()
        report.struct_size = ctypes.sizeof(report)
        check(lib, lib.kiln_model_compile(self._h(), ctypes.byref(opts), _path(path),
                                          ctypes.byref(report)))
        if raised:
            raise raised[0]
        del keep
        return CompileReport._from(report)

    def emit(self, kind: str = "graph", target: Optional[str] = None, opt_level: int = 3,
             disabled_passes: Sequence[str] = (), memory_plan: bool = True,
             num_threads: int = 0) -> str:
        """One stage of compilation as text, without writing an artifact:
        kind "graph" (fused graph IR), "loop" (loop IR), "llvm" (LLVM IR) or
        "asm" (the target's assembly). Options as for compile."""
        if kind not in _EMIT_KINDS:
            raise Error(StatusCode.INVALID_ARGUMENT, "emit kind %r: expected one of %s" %
                        (kind, ", ".join(_EMIT_KINDS)))
        lib = self._lib
        opts, keep = self._compile_options(target, opt_level, disabled_passes, memory_plan,
                                           num_threads, None)
        out = ctypes.c_void_p()
        check(lib, lib.kiln_model_emit(self._h(), ctypes.byref(opts), _EMIT_KINDS[kind],
                                       ctypes.byref(out), None))
        del keep
        return _capi.take_string(lib, out)

    def __repr__(self) -> str:
        if not self._handle:
            return "kiln.Model(closed)"
        ins = ", ".join("%s: %s%s" % (i.name, i.dtype, list(i.shape)) for i in self.inputs)
        return "kiln.Model(%s)" % ins
