"""kiln.session: running an artifact (KilnSession).

    session = kiln.Session(artifact, num_threads=2)   # or artifact.session()
    outputs = session.run({"input": x})               # {name: np.ndarray}
    profile = session.profile(warmup=2, repeat=10)    # per-node rows

A Session holds all the memory one run needs, allocated once. The C API
allows one thread at a time on a session (docs/c_api.md section 2.8); this
class serializes its calls with a lock, so sharing one between threads is
safe but gains nothing: make one session per thread.

Inputs may be NumPy arrays (C-contiguous ones are read in place by the copy
into the session; others are made contiguous first), kiln.Tensor, any other
DLPack producer (``__dlpack__``: PyTorch CPU tensors, ...), or anything
``np.asarray`` accepts (converted to the input's dtype; arrays never are:
a NumPy array of another dtype is an error). Inputs keep their values between runs. Outputs come
back as new NumPy arrays (one copy out of the session), or as kiln.Tensor
through ``output_dlpack``.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from kiln import _capi, _dlpack
from kiln._dlpack import DLTensor
from kiln.artifact import Artifact
from kiln.errors import Error, StatusCode, check
from kiln.profile import BenchmarkResult, Profile
from kiln.tensor import Tensor, TensorInfo, from_dlpack
from kiln.threadpool import ThreadPool

Key = Union[str, int]

_c_char_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _data_address(a: np.ndarray) -> int:
    """The address of a C-contiguous array's first byte."""
    try:
        return _addressof(_c_char_from_buffer(a))  # fast; needs a writable, non-empty buffer
    except (TypeError, ValueError, BufferError):
        return a.ctypes.data  # read-only or empty


class _Port:
    """One input or output: its index, name, and a DLTensor kept for the
    calls (its shape array is the artifact's plan shape)."""

    __slots__ = ("index", "name", "name_b", "info", "shape", "np_dtype", "dl", "shape_arr")

    def __init__(self, index: int, info: TensorInfo) -> None:
        self.index = index
        self.name = info.name or ""
        self.name_b = self.name.encode()
        self.info = info
        self.shape = tuple(int(d) for d in info.shape)  # an artifact's shapes are static
        self.np_dtype = info.numpy_dtype
        self.shape_arr = (ctypes.c_int64 * max(len(self.shape), 1))(*self.shape)
        self.dl = DLTensor()
        self.dl.device.device_type = _dlpack.KDL_CPU
        self.dl.dtype.code, self.dl.dtype.bits, self.dl.dtype.lanes = info.dlpack_dtype
        self.dl.ndim = len(self.shape)
        self.dl.shape = ctypes.cast(self.shape_arr, ctypes.POINTER(ctypes.c_int64))


class Session:
    """A session of an artifact: its inputs, outputs, arena and threads.

    num_threads: 0 = $KILN_NUM_THREADS or the CPU count; 1 = everything on
        the calling thread; N = a pool of N threads owned by the session.
    pool: a kiln.ThreadPool to share instead (num_threads is then ignored).
    The session keeps the artifact (and pool) alive until it is closed."""

    def __init__(self, artifact: Artifact, num_threads: int = 0,
                 pool: Optional[ThreadPool] = None) -> None:
        lib = artifact._lib
        opts = _capi.KilnSessionOptions()
        opts.struct_size = ctypes.sizeof(opts)
        opts.num_threads = num_threads
        self._handle: Optional[int] = None
        self._borrowed: List[Any] = []
        a = artifact._owned.borrow()
        self._borrowed.append(artifact._owned)
        if pool is not None:
            opts.pool = pool._owned.borrow()
            self._borrowed.append(pool._owned)
        out = _capi.Handle()
        try:
            check(lib, lib.kiln_session_create(a, ctypes.byref(opts), ctypes.byref(out)))
        except Error:
            self._give_back()
            raise
        self._handle = out.value
        self._lib = lib
        self._lock = threading.Lock()
        self.artifact = artifact
        self._inputs = [_Port(i, info) for i, info in enumerate(artifact.inputs)]
        self._outputs = [_Port(i, info) for i, info in enumerate(artifact.outputs)]
        self._input_by_name = {p.name: p for p in self._inputs}
        self._output_by_name = {p.name: p for p in self._outputs}
        self._pinned: Dict[str, Any] = {}  # zero-copy inputs the session reads in place
        # Bound once: the hot path calls these.
        self._set_input = lib.kiln_session_set_input
        self._set_input_zero_copy = lib.kiln_session_set_input_zero_copy
        self._run = lib.kiln_session_run
        self._copy_output = lib.kiln_session_copy_output

    # ----------------------------------------------------------- lifetime

    def _give_back(self) -> None:
        borrowed, self._borrowed = getattr(self, "_borrowed", []), []
        for owned in reversed(borrowed):
            owned.give_back()

    def close(self) -> None:
        """Releases the session now (otherwise when it is garbage). Idempotent.
        Tensors from output_dlpack and profiles stay valid."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            with self._lock:
                self._lib.kiln_session_release(handle)
            self._pinned = {}
        self._give_back()

    __del__ = close

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _h(self) -> int:
        h = self._handle
        if not h:
            raise Error(StatusCode.FAILED_PRECONDITION, "the session was closed")
        return h

    # ------------------------------------------------------------- ports

    @property
    def inputs(self) -> List[TensorInfo]:
        return [p.info for p in self._inputs]

    @property
    def outputs(self) -> List[TensorInfo]:
        return [p.info for p in self._outputs]

    def _port(self, ports: List[_Port], by_name: Dict[str, _Port], key: Key, what: str) -> _Port:
        if isinstance(key, str):
            port = by_name.get(key)
            if port is None:
                raise Error(StatusCode.NOT_FOUND, "%s: no %s named '%s'; the %ss are: %s" % (
                    self.artifact.path, what, key, what, ", ".join(p.name for p in ports)))
            return port
        if isinstance(key, (int, np.integer)) and 0 <= key < len(ports):
            return ports[int(key)]
        raise Error(StatusCode.OUT_OF_RANGE, "%s: %s %r out of range (%d %ss)" % (
            self.artifact.path, what, key, len(ports), what))

    # ------------------------------------------------------------- inputs

    def _set(self, port: _Port, value: Any, zero_copy: bool) -> None:
        """set_input for one value (the caller holds the lock)."""
        if (value.__class__ is np.ndarray and value.dtype is port.np_dtype
                and value.shape == port.shape and value.flags.c_contiguous):
            # The common case: the port's own DLTensor (plan dtype and shape).
            dl = port.dl
            dl.data = _data_address(value)
            keep: Any = value
        else:
            dl, keep = self._describe(port, value, zero_copy)
        address = _addressof(dl)
        if zero_copy:
            st = self._set_input_zero_copy(self._handle, port.name_b, address)
            if st:
                check(self._lib, st)
            self._pinned[port.name] = keep
        else:
            st = self._set_input(self._handle, port.name_b, address)
            if st:
                check(self._lib, st)
            if self._pinned:
                self._pinned.pop(port.name, None)

    def _describe(self, port: _Port, value: Any, zero_copy: bool) -> Tuple[DLTensor, Any]:
        """A DLTensor for any input value, and what keeps its memory alive."""
        if isinstance(value, Tensor):
            return value.dl_tensor, value
        if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
            t = from_dlpack(value)
            return t.dl_tensor, t
        if not isinstance(value, np.ndarray) or value.dtype.kind == "O":
            if zero_copy:
                raise Error(StatusCode.INVALID_ARGUMENT, "input '%s': a zero-copy input must "
                            "be a NumPy array or a DLPack tensor" % port.name)
            # Lists, scalars, ...: converted to the input's dtype (a NumPy
            # array never is: its dtype must match).
            value = np.ascontiguousarray(value, dtype=port.np_dtype)
        if not value.flags.c_contiguous:
            if zero_copy:
                raise Error(StatusCode.INVALID_ARGUMENT, "input '%s': a zero-copy input must "
                            "be C-contiguous" % port.name)
            value = np.ascontiguousarray(value)
        code, bits = _dlpack.from_numpy_dtype(value.dtype)
        if code == _dlpack.KDL_UINT and bits == 16 and port.info.dtype == "bfloat16":
            code = _dlpack.KDL_BFLOAT  # bfloat16 travels as its uint16 bit patterns
        # The array's own dtype and shape: when they differ from the plan, the
        # C API says what was expected and what was given.
        dl = DLTensor()
        dl.device.device_type = _dlpack.KDL_CPU
        dl.ndim = value.ndim
        shape = (ctypes.c_int64 * max(value.ndim, 1))(*value.shape)
        dl.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        dl.dtype.code, dl.dtype.bits, dl.dtype.lanes = code, bits, 1
        dl.data = _data_address(value)
        return dl, (value, shape)

    def set_input(self, key: Key, value: Any, zero_copy: bool = False) -> None:
        """Sets input `key` (a name or an index) to `value`, copied into the
        session. dtype and shape must match the artifact's input exactly
        (kiln.Error INVALID_ARGUMENT says what was expected and what given).

        zero_copy=True: the session reads the array's memory in place during
        every later run, until the input is set again or the session is
        closed. The session keeps a reference to the array; do not change
        it while it is set. The data must be aligned to its element size."""
        with self._lock:
            self._h()
            self._set(self._port(self._inputs, self._input_by_name, key, "input"), value,
                      zero_copy)

    # ---------------------------------------------------------------- run

    def run(self, inputs: Optional[Mapping[Key, Any]] = None,
            outputs: Optional[Sequence[Key]] = None) -> Dict[str, np.ndarray]:
        """Sets `inputs` ({name or index: array}), runs the model once and
        returns the outputs as {name: new NumPy array}: every output, or
        those named in `outputs`. Inputs not given keep their last value;
        one that was never set is kiln.Error (FAILED_PRECONDITION)."""
        with self._lock:
            h = self._h()
            ports = self._outputs if outputs is None else [
                self._port(self._outputs, self._output_by_name, k, "output") for k in outputs]
            if inputs:
                for key, value in inputs.items():
                    port = self._input_by_name.get(key) if isinstance(key, str) else None
                    if port is None:
                        port = self._port(self._inputs, self._input_by_name, key, "input")
                    self._set(port, value, False)
            st = self._run(h)
            if st:
                check(self._lib, st)
            return {p.name: self._copy(p) for p in ports}

    def _copy(self, port: _Port) -> np.ndarray:
        if port.np_dtype is None:
            raise Error(StatusCode.UNIMPLEMENTED, "output '%s' has dtype %s, which NumPy cannot "
                        "hold; use output_dlpack" % (port.name, port.info.dtype))
        out = np.empty(port.shape, port.np_dtype)
        dl = port.dl  # an output port's DLTensor keeps the plan's dtype and shape
        dl.data = _data_address(out)
        st = self._copy_output(self._handle, port.index, _addressof(dl))
        if st:
            check(self._lib, st)
        return out

    def output(self, key: Key) -> np.ndarray:
        """A copy of output `key` (name or index) from the latest run."""
        with self._lock:
            self._h()
            return self._copy(self._port(self._outputs, self._output_by_name, key, "output"))

    def output_dlpack(self, key: Key) -> Tensor:
        """A copy of output `key` as a kiln.Tensor (kiln_session_get_output_dlpack):
        it outlives the session and hands itself to any DLPack consumer
        (``np.from_dlpack``, ``torch.from_dlpack``) without another copy."""
        with self._lock:
            h = self._h()
            port = self._port(self._outputs, self._output_by_name, key, "output")
            out = ctypes.POINTER(_dlpack.DLManagedTensor)()
            check(self._lib, self._lib.kiln_session_get_output_dlpack(h, port.index,
                                                                      ctypes.byref(out)))
            return Tensor._adopt(ctypes.addressof(out.contents))

    # ----------------------------------------------------- profile, bench

    @staticmethod
    def _profile_options(warmup: int, repeat: int, skip_tensors: bool = False):
        opts = _capi.KilnProfileOptions()
        opts.struct_size = ctypes.sizeof(opts)
        opts.warmup, opts.repeat, opts.skip_tensors = warmup, repeat, 1 if skip_tensors else 0
        return opts

    def profile(self, warmup: int = 0, repeat: int = 1) -> Profile:
        """Runs the model `warmup` times untimed, then `repeat` times with a
        timer around every kernel; returns the per-node rows (median times).
        The inputs must be set; afterwards the outputs hold the last run's."""
        with self._lock:
            h = self._h()
            out = _capi.Handle()
            opts = self._profile_options(warmup, repeat)
            check(self._lib, self._lib.kiln_session_profile_with(h, ctypes.byref(opts),
                                                                 ctypes.byref(out)))
            return Profile._take(self._lib, out)

    def benchmark(self, warmup: int = 1, repeat: int = 10, workload: Optional[str] = None,
                  hardware: Optional[str] = None) -> BenchmarkResult:
        """Times `repeat` runs in C (kiln_session_benchmark) after `warmup`
        (at least 1): no Python in the timed loop. The inputs must be set."""
        with self._lock:
            h = self._h()
            opts = _capi.KilnBenchmarkOptions()
            opts.struct_size = ctypes.sizeof(opts)
            opts.warmup, opts.repeat = warmup, repeat
            keep = [None if s is None else s.encode() for s in (workload, hardware)]
            opts.workload, opts.hardware = keep
            result = _capi.KilnBenchmarkResult()
            line = ctypes.c_void_p()
            check(self._lib, self._lib.kiln_session_benchmark(h, ctypes.byref(opts),
                                                              ctypes.byref(result),
                                                              ctypes.byref(line)))
            return BenchmarkResult(result.mean_ms, result.std_ms, result.min_ms, result.max_ms,
                                   result.repeat, _capi.take_string(self._lib, line))

    def debug_dump(self, directory: Union[str, "os.PathLike[str]"], warmup: int = 0,
                   repeat: int = 1, tensors: bool = True) -> None:
        """Writes graph.json, profile.txt, trace.json and (with tensors)
        tensors/<node>__<i>.npy of every node into `directory`."""
        with self._lock:
            h = self._h()
            opts = self._profile_options(warmup, repeat, skip_tensors=not tensors)
            check(self._lib, self._lib.kiln_session_debug_dump_with(
                h, os.fsencode(os.fspath(directory)), ctypes.byref(opts)))

    def __repr__(self) -> str:
        return "kiln.Session(%r%s)" % (self.artifact.path, "" if self._handle else ", closed")
