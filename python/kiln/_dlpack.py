"""kiln._dlpack: DLPack structs, dtypes and PyCapsules for ctypes (internal).

The layouts are those of <dlpack/dlpack.h> (DLPack 0.6-0.8, unchanged in
that range) on LP64 Linux. The capsule protocol is the one the DLPack Python
specification gives: a capsule named "dltensor" holds a DLManagedTensor*;
a consumer renames it "used_dltensor" and calls the deleter when done; a
capsule still named "dltensor" when it dies calls the deleter itself.
"""

from __future__ import annotations

import ctypes
from typing import Dict, Tuple

import numpy as np

KDL_CPU = 1
KDL_CUDA_HOST = 3

KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT, KDL_BOOL = 0, 1, 2, 4, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DLDeleter),
]

assert ctypes.sizeof(DLTensor) == 48 and ctypes.sizeof(DLManagedTensor) == 64

# ------------------------------------------------------------------- dtypes

# (code, bits) -> the NumPy dtype of the same bytes. bfloat16 has no NumPy
# dtype: its 16-bit patterns travel as uint16 (as kiln's .npy files hold it).
_TO_NUMPY: Dict[Tuple[int, int], np.dtype] = {
    (KDL_FLOAT, 16): np.dtype(np.float16),
    (KDL_FLOAT, 32): np.dtype(np.float32),
    (KDL_FLOAT, 64): np.dtype(np.float64),
    (KDL_INT, 8): np.dtype(np.int8),
    (KDL_INT, 16): np.dtype(np.int16),
    (KDL_INT, 32): np.dtype(np.int32),
    (KDL_INT, 64): np.dtype(np.int64),
    (KDL_UINT, 8): np.dtype(np.uint8),
    (KDL_UINT, 16): np.dtype(np.uint16),
    (KDL_UINT, 32): np.dtype(np.uint32),
    (KDL_UINT, 64): np.dtype(np.uint64),
    (KDL_BOOL, 8): np.dtype(np.bool_),
    (KDL_BFLOAT, 16): np.dtype(np.uint16),
}
_FROM_NUMPY: Dict[np.dtype, Tuple[int, int]] = {
    v: k for k, v in _TO_NUMPY.items() if k[0] != KDL_BFLOAT
}
_NAMES = {KDL_INT: "int", KDL_UINT: "uint", KDL_FLOAT: "float", KDL_BFLOAT: "bfloat"}


def dtype_name(code: int, bits: int, lanes: int = 1) -> str:
    """kiln's name of a DLPack dtype: "float32", "int64", "bool", "bfloat16", "float32x4"."""
    base = "bool" if code == KDL_BOOL else "%s%d" % (_NAMES.get(code, "code%d_" % code), bits)
    return base if lanes == 1 else "%sx%d" % (base, lanes)


def to_numpy_dtype(dt: DLDataType) -> np.dtype:
    """The NumPy dtype holding a DLPack dtype's bytes (bfloat16 -> uint16)."""
    if dt.lanes != 1 or (dt.code, dt.bits) not in _TO_NUMPY:
        from kiln.errors import Error, StatusCode

        raise Error(StatusCode.UNIMPLEMENTED, "dtype %s has no NumPy equivalent" %
                    dtype_name(dt.code, dt.bits, dt.lanes))
    return _TO_NUMPY[(dt.code, dt.bits)]


def from_numpy_dtype(dt: np.dtype) -> Tuple[int, int]:
    """(code, bits) of a NumPy dtype; raises kiln.Error for one DLPack lacks."""
    try:
        return _FROM_NUMPY[dt]
    except KeyError:
        from kiln.errors import Error, StatusCode

        raise Error(StatusCode.INVALID_ARGUMENT,
                    "NumPy dtype %s is not a kiln tensor dtype (use float16/32/64, "
                    "(u)int8/16/32/64 or bool)" % dt) from None


# ----------------------------------------------------------------- capsules

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]

# The capsule keeps these char* for its whole life: module constants.
DLTENSOR = b"dltensor"
USED_DLTENSOR = b"used_dltensor"

# Called when a capsule dies. The capsule (a PyObject* with refcount 0) must
# not be turned into a Python object here, so it is read as a raw pointer.
_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))


@_CapsuleDestructor
def _capsule_destructor(capsule: int) -> None:
    # A capsule still named "dltensor" was never consumed: delete its tensor.
    if _raw_is_valid(capsule, DLTENSOR):
        ptr = _raw_get_pointer(capsule, DLTENSOR)
        if ptr:
            managed = ctypes.cast(ptr, ctypes.POINTER(DLManagedTensor))
            if managed.contents.deleter:
                managed.contents.deleter(managed)


_DESTRUCTOR_ADDRESS = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


def make_capsule(managed_address: int) -> object:
    """A "dltensor" capsule owning the DLManagedTensor at `managed_address`."""
    return _api.PyCapsule_New(managed_address, DLTENSOR, _DESTRUCTOR_ADDRESS)


def consume_capsule(capsule: object) -> int:
    """Takes the DLManagedTensor* out of a "dltensor" capsule and renames it
    "used_dltensor": the caller now owns the tensor and calls its deleter."""
    if not _api.PyCapsule_IsValid(capsule, DLTENSOR):
        from kiln.errors import Error, StatusCode

        raise Error(StatusCode.INVALID_ARGUMENT,
                    "not a DLPack capsule named 'dltensor' (was it consumed already?)")
    ptr = _api.PyCapsule_GetPointer(capsule, DLTENSOR)
    _api.PyCapsule_SetName(capsule, USED_DLTENSOR)
    return ptr
