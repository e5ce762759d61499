"""kiln.tensor: tensors that cross the C ABI as DLPack.

``kiln.Tensor`` owns one ``DLManagedTensor``: a copy of a session output
(``Session.output_dlpack``, made by ``kiln_session_get_output_dlpack``), or a
tensor taken from another library with ``kiln.from_dlpack``. It speaks the
DLPack protocol both ways::

    t = session.output_dlpack("output")     # kiln -> any DLPack consumer
    a = np.from_dlpack(t)                   # or torch.from_dlpack(t): no copy
    x = kiln.from_dlpack(torch_tensor)      # any CPU DLPack producer -> kiln
    session.run({"input": x})

``TensorInfo`` describes a model, artifact or session input or output.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import numpy as np

from kiln import _dlpack
from kiln._dlpack import DLDeleter, DLManagedTensor, DLTensor
from kiln.errors import Error, StatusCode


@dataclass(frozen=True)
class TensorInfo:
    """An input's or output's name, shape and dtype.

    ``shape`` holds ``None`` for a dim that is not static (a model input
    whose ONNX dim is symbolic and was not bound). ``dtype`` is kiln's name
    ("float32", "int64", "bool", "bfloat16", ...); ``numpy_dtype`` is the
    NumPy dtype of the same bytes (uint16 for bfloat16; None for a dtype
    NumPy has no equivalent for); ``dlpack_dtype`` is (code, bits, lanes)."""

    name: Optional[str]
    shape: Tuple[Optional[int], ...]
    dtype: str
    numpy_dtype: Optional[np.dtype]
    dlpack_dtype: Tuple[int, int, int]

    @staticmethod
    def from_dl(name: Optional[str], t: DLTensor) -> "TensorInfo":
        shape = tuple(None if t.shape[i] < 0 else int(t.shape[i]) for i in range(t.ndim))
        try:
            np_dtype: Optional[np.dtype] = _dlpack.to_numpy_dtype(t.dtype)
        except Error:
            np_dtype = None
        dt = (t.dtype.code, t.dtype.bits, t.dtype.lanes)
        return TensorInfo(name, shape, _dlpack.dtype_name(*dt), np_dtype, dt)


def shape_of(t: DLTensor) -> Tuple[int, ...]:
    return tuple(t.shape[i] for i in range(t.ndim))


def numpy_view(t: DLTensor, owner: Any) -> np.ndarray:
    """A NumPy array over a compact CPU DLTensor's memory (no copy); it keeps
    `owner` alive, whose lifetime bounds the memory's."""
    dtype = _dlpack.to_numpy_dtype(t.dtype)
    shape = shape_of(t)
    nbytes = dtype.itemsize
    for d in shape:
        nbytes *= d
    if nbytes == 0:
        return np.empty(shape, dtype)
    buf = (ctypes.c_char * nbytes).from_address(t.data + t.byte_offset)
    buf._kiln_owner = owner  # the array's base is `buf`, which holds the owner
    return np.frombuffer(buf, dtype).reshape(shape)


# Exports in flight: address of the DLManagedTensor handed out -> (that
# struct, the Tensor whose memory it shares). The consumer's deleter call
# drops the entry.
_exports: Dict[int, Tuple[DLManagedTensor, "Tensor"]] = {}


@DLDeleter
def _export_deleter(managed: "ctypes._Pointer[DLManagedTensor]") -> None:
    _exports.pop(ctypes.addressof(managed.contents), None)


class Tensor:
    """A tensor in CPU memory owned through a DLPack ``DLManagedTensor``.

    Made by ``Session.output_dlpack`` (a copy kiln allocated; it outlives the
    session) or by ``kiln.from_dlpack`` (another library's tensor, adopted
    without a copy). The memory is freed, through the tensor's own deleter,
    when the Tensor and every export of it (``np.from_dlpack(t)``, ...) are
    gone. Pass it to ``Session.run`` / ``Session.set_input`` as an input."""

    __slots__ = ("_managed", "_ptr", "__weakref__")

    def __init__(self) -> None:
        raise TypeError("kiln.Tensor is made by Session.output_dlpack or kiln.from_dlpack")

    @classmethod
    def _adopt(cls, address: int) -> "Tensor":
        self = object.__new__(cls)
        self._ptr = address
        self._managed = DLManagedTensor.from_address(address)
        return self

    def __del__(self) -> None:
        ptr, self._ptr = getattr(self, "_ptr", 0), 0
        if ptr:
            m = ctypes.cast(ptr, ctypes.POINTER(DLManagedTensor))
            if m.contents.deleter:
                m.contents.deleter(m)

    @property
    def dl_tensor(self) -> DLTensor:
        """The DLTensor (borrowed: valid while this Tensor lives)."""
        return self._managed.dl_tensor

    @property
    def shape(self) -> Tuple[int, ...]:
        return shape_of(self._managed.dl_tensor)

    @property
    def dtype(self) -> str:
        dt = self._managed.dl_tensor.dtype
        return _dlpack.dtype_name(dt.code, dt.bits, dt.lanes)

    @property
    def device(self) -> Tuple[int, int]:
        d = self._managed.dl_tensor.device
        return (d.device_type, d.device_id)

    def numpy(self) -> np.ndarray:
        """A NumPy array sharing this tensor's memory (no copy). bfloat16
        comes out as uint16 bit patterns."""
        t = self._managed.dl_tensor
        if t.strides:
            return np.from_dlpack(self)  # strided: let NumPy read the strides
        return numpy_view(t, self)

    def __array__(self, dtype: Any = None) -> np.ndarray:
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __dlpack__(self, stream: Any = None) -> object:
        """A "dltensor" capsule sharing this tensor's memory (DLPack protocol).
        Each call makes a new export; the Tensor stays valid and usable."""
        if stream is not None:
            raise BufferError("kiln tensors are CPU tensors: stream must be None")
        export = DLManagedTensor()
        export.dl_tensor = self._managed.dl_tensor  # the same data and shape arrays
        export.manager_ctx = None
        export.deleter = _export_deleter
        address = ctypes.addressof(export)
        _exports[address] = (export, self)
        return _dlpack.make_capsule(address)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self.device

    def __repr__(self) -> str:
        return "kiln.Tensor(shape=%s, dtype=%s)" % (list(self.shape), self.dtype)


def from_dlpack(obj: Any) -> Tensor:
    """Adopts any DLPack producer's CPU tensor (an object with ``__dlpack__``,
    such as a NumPy array or a PyTorch CPU tensor, or a "dltensor" capsule)
    without copying it. kiln only reads CPU memory: a tensor on another
    device raises kiln.Error (INVALID_ARGUMENT)."""
    if isinstance(obj, Tensor):
        return obj
    if hasattr(obj, "__dlpack_device__"):
        device_type = obj.__dlpack_device__()[0]
        if device_type != _dlpack.KDL_CPU:
            raise Error(StatusCode.INVALID_ARGUMENT,
                        "kiln takes CPU tensors (DLPack device type %d); this one is on "
                        "device type %d: copy it to the CPU first" % (_dlpack.KDL_CPU,
                                                                     device_type))
    capsule = obj.__dlpack__() if hasattr(obj, "__dlpack__") else obj
    tensor = Tensor._adopt(_dlpack.consume_capsule(capsule))
    if tensor.device[0] != _dlpack.KDL_CPU:
        raise Error(StatusCode.INVALID_ARGUMENT, "kiln takes CPU tensors; this one is on "
                    "DLPack device type %d" % tensor.device[0])
    return tensor
