"""kiln._capi: the C ABI of libkiln.so, declared for ctypes (internal).

Everything the package calls is declared here, from kiln/kiln.h and the
runtime headers it includes (docs/c_api.md); nothing else crosses into C.
The library is found on first use, in this order:

1. ``$KILN_LIBRARY``: the path of ``libkiln.so`` (or of ``libkiln_runtime.so``
   for a process that only loads and runs artifacts). When it is set, nothing
   else is tried.
2. ``kiln/_lib/libkiln.so`` inside the installed package (a wheel built with
   ``KILN_SDK`` set carries it there, see python/README.md), then
   ``kiln/_lib/libkiln_runtime.so``.
3. ``libkiln.so.0`` (the SONAME: what a system with only the run-time
   files has), ``libkiln.so``, then ``libkiln_runtime.so.0`` and
   ``libkiln_runtime.so``, by name through the system's dynamic loader
   (``LD_LIBRARY_PATH``, ``/etc/ld.so.conf``).

It is opened with ``RTLD_GLOBAL``: compiled models resolve the runtime's
kernel-ABI functions (``kiln_parallel_launch``, ...) from the global scope
(docs/c_api.md section 2.9).
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import List, Optional

from kiln._dlpack import DLManagedTensor, DLTensor

P = ctypes.POINTER
c_char_p = ctypes.c_char_p
c_int32 = ctypes.c_int32
c_void_p = ctypes.c_void_p

# The C ABI version these declarations were written against (KILN_API_VERSION),
# and the oldest library they work with: version 2 added kiln_model_warnings,
# which Model.warnings needs; version 3 the output names, dim names
# (Model.outputs' names, TensorInfo.dim_names) and the compile progress
# callback; version 4 kiln_model_evaluate and VM artifacts (docs/vm.md);
# version 5 the session's device (KilnSessionOptions.device_type/device_id)
# and kiln_artifact_device_code_json (docs/cuda.md); version 6 sequences of
# tensors (kiln_session_set_input_sequence, ...; docs/vm.md: declared here,
# not yet wrapped by Session); version 7 optionals (kiln_session_set_input_none,
# kiln_session_get_output_is_none, ...; declared, not yet wrapped); everything
# else is in version 1.
API_VERSION = 7
MIN_API_VERSION = 1

Status = c_void_p  # KilnStatus*: None (NULL) means success.
Handle = c_void_p  # KilnModel*, KilnArtifact*, KilnSession*, KilnProfile*, ...

# ------------------------------------------------------------ option structs


class KilnInputShape(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("ndim", c_int32), ("dims", P(ctypes.c_int64))]


class KilnImportOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("input_shapes", P(KilnInputShape)),
        ("num_input_shapes", c_int32),
        ("external_data_dir", c_char_p),
    ]


# void (*)(void* user_data, const char* pass, int32_t changed, double ms, const char* text)
KilnAfterPassFn = ctypes.CFUNCTYPE(None, c_void_p, c_char_p, c_int32, ctypes.c_double, c_char_p)
KilnCompileProgressFn = ctypes.CFUNCTYPE(None, c_void_p, c_char_p, c_int32, c_int32)  # version 3


class KilnOptimizeOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("opt_level", c_int32),
        ("passes", P(c_char_p)),
        ("num_passes", c_int32),
        ("required_passes", P(c_char_p)),
        ("num_required_passes", c_int32),
        ("disabled_passes", P(c_char_p)),
        ("num_disabled_passes", c_int32),
        ("after_pass", KilnAfterPassFn),
        ("after_pass_user_data", c_void_p),
        ("after_pass_text", c_int32),
    ]


class KilnCompileOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("target", c_char_p),
        ("opt_level", c_int32),
        ("disabled_passes", P(c_char_p)),
        ("num_disabled_passes", c_int32),
        ("no_memory_plan", c_int32),
        ("num_threads", c_int32),
        ("cc", c_char_p),
        ("progress", KilnCompileProgressFn),  # C ABI version 3
        ("progress_user_data", c_void_p),
    ]


class KilnCompileReport(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("passes_ms", ctypes.c_double),
        ("lower_ms", ctypes.c_double),
        ("plan_ms", ctypes.c_double),
        ("codegen_ms", ctypes.c_double),
        ("link_ms", ctypes.c_double),
        ("num_fused_calls", c_int32),
        ("num_kernels", c_int32),
        ("arena_bytes", ctypes.c_int64),
        ("naive_bytes", ctypes.c_int64),
        ("file_bytes", ctypes.c_uint64),
    ]


class KilnArtifactLoadOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("hmac_key", c_void_p),
        ("hmac_key_size", ctypes.c_size_t),
        ("expected_hmac_sha256", c_void_p),
    ]


class KilnSessionOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("num_threads", c_int32), ("pool", c_void_p),
                ("device_type", c_int32), ("device_id", c_int32)]  # the device: C ABI version 5


class KilnProfileOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("warmup", c_int32),
        ("repeat", c_int32),
        ("skip_tensors", c_int32),
    ]


class KilnBenchmarkOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("warmup", c_int32),
        ("repeat", c_int32),
        ("workload", c_char_p),
        ("hardware", c_char_p),
    ]


class KilnBenchmarkResult(ctypes.Structure):
    _fields_ = [
        ("mean_ms", ctypes.c_double),
        ("std_ms", ctypes.c_double),
        ("min_ms", ctypes.c_double),
        ("max_ms", ctypes.c_double),
        ("repeat", c_int32),
    ]


# The C layouts on LP64 Linux (x86_64, aarch64); tests/test_capi.py checks them
# against the header with the C compiler too.
STRUCT_SIZES = {
    "KilnInputShape": 24,
    "KilnImportOptions": 32,
    "KilnOptimizeOptions": 88,
    "KilnCompileOptions": 72,
    "KilnCompileReport": 80,
    "KilnArtifactLoadOptions": 32,
    "KilnSessionOptions": 32,
    "KilnProfileOptions": 24,
    "KilnBenchmarkOptions": 32,
    "KilnBenchmarkResult": 40,
}

# --------------------------------------------------------------- signatures

_RUNTIME = {
    "kiln_runtime_version": (c_char_p, []),
    "kiln_api_version": (ctypes.c_uint32, []),
    "kiln_status_code": (ctypes.c_int, [Status]),
    "kiln_status_message": (c_char_p, [Status]),
    "kiln_status_code_name": (c_char_p, [ctypes.c_int]),
    "kiln_status_free": (None, [Status]),
    "kiln_free": (None, [c_void_p]),
    "kiln_artifact_load": (Status, [c_char_p, P(Handle)]),
    "kiln_artifact_load_with": (Status, [c_char_p, P(KilnArtifactLoadOptions), P(Handle)]),
    "kiln_artifact_release": (None, [Handle]),
    "kiln_artifact_target": (c_char_p, [Handle]),
    "kiln_artifact_producer": (c_char_p, [Handle]),
    "kiln_artifact_graph_json": (c_char_p, [Handle]),
    "kiln_artifact_device_code_json": (c_char_p, [Handle]),  # C ABI version 5
    "kiln_artifact_num_inputs": (c_int32, [Handle]),
    "kiln_artifact_num_outputs": (c_int32, [Handle]),
    "kiln_artifact_num_nodes": (c_int32, [Handle]),
    "kiln_artifact_input_info": (Status, [Handle, c_int32, P(c_char_p), P(DLTensor)]),
    "kiln_artifact_output_info": (Status, [Handle, c_int32, P(c_char_p), P(DLTensor)]),
    "kiln_artifact_input_index": (Status, [Handle, c_char_p, P(c_int32)]),
    "kiln_artifact_output_index": (Status, [Handle, c_char_p, P(c_int32)]),
    "kiln_artifact_memory_stats": (None, [Handle, P(ctypes.c_uint64), P(ctypes.c_uint64)]),
    "kiln_artifact_input_is_sequence": (c_int32, [Handle, c_int32]),  # C ABI version 6
    "kiln_artifact_output_is_sequence": (c_int32, [Handle, c_int32]),
    "kiln_session_set_input_sequence": (Status, [Handle, c_char_p, c_void_p, c_int32]),
    "kiln_session_get_output_sequence_length": (Status, [Handle, c_int32, P(c_int32)]),
    "kiln_session_get_output_sequence_element": (Status, [Handle, c_int32, c_int32, P(P(DLTensor))]),
    "kiln_artifact_input_is_optional": (c_int32, [Handle, c_int32]),  # C ABI version 7
    "kiln_artifact_output_is_optional": (c_int32, [Handle, c_int32]),
    "kiln_session_set_input_none": (Status, [Handle, c_char_p]),
    "kiln_session_get_output_is_none": (Status, [Handle, c_int32, P(c_int32)]),
    "kiln_session_create": (Status, [Handle, P(KilnSessionOptions), P(Handle)]),
    "kiln_session_release": (None, [Handle]),
    "kiln_session_set_input": (Status, [Handle, c_char_p, c_void_p]),
    "kiln_session_set_input_zero_copy": (Status, [Handle, c_char_p, c_void_p]),
    "kiln_session_set_input_index": (Status, [Handle, c_int32, c_void_p]),
    "kiln_session_run": (Status, [Handle]),
    "kiln_session_get_output": (Status, [Handle, c_int32, P(P(DLTensor))]),
    "kiln_session_copy_output": (Status, [Handle, c_int32, c_void_p]),
    "kiln_session_get_output_dlpack": (Status, [Handle, c_int32, P(P(DLManagedTensor))]),
    "kiln_session_profile_with": (Status, [Handle, P(KilnProfileOptions), P(Handle)]),
    "kiln_session_debug_dump_with": (Status, [Handle, c_char_p, P(KilnProfileOptions)]),
    "kiln_session_benchmark": (Status, [Handle, P(KilnBenchmarkOptions), P(KilnBenchmarkResult),
                                        P(c_void_p)]),
    "kiln_profile_release": (None, [Handle]),
    "kiln_profile_num_nodes": (c_int32, [Handle]),
    "kiln_profile_total_us": (ctypes.c_double, [Handle]),
    "kiln_profile_node": (Status, [Handle, c_int32, P(c_char_p), P(c_char_p),
                                   P(ctypes.c_double)]),
    "kiln_profile_table": (Status, [Handle, P(c_void_p)]),
    "kiln_profile_chrome_trace": (Status, [Handle, P(c_void_p)]),
    "kiln_thread_pool_default_num_threads": (c_int32, []),
    "kiln_thread_pool_create": (c_int32, [c_int32, P(Handle)]),
    "kiln_thread_pool_destroy": (None, [Handle]),
    "kiln_thread_pool_num_threads": (c_int32, [Handle]),
}

# Only in libkiln.so (kiln/kiln.h): the compiler.
_COMPILER = {
    "kiln_version": (c_char_p, []),
    "kiln_import_options_init": (None, [P(KilnImportOptions)]),
    "kiln_model_load_onnx_file": (Status, [c_char_p, P(KilnImportOptions), P(Handle)]),
    "kiln_model_load_onnx_bytes": (Status, [c_char_p, ctypes.c_size_t, P(KilnImportOptions),
                                            P(Handle)]),
    "kiln_model_parse_text": (Status, [c_char_p, c_char_p, P(Handle)]),
    "kiln_model_load_file": (Status, [c_char_p, P(KilnImportOptions), P(Handle)]),
    "kiln_model_release": (None, [Handle]),
    "kiln_model_warnings": (Status, [Handle, P(c_char_p)]),  # C ABI version 2
    "kiln_model_print": (Status, [Handle, c_int32, P(c_void_p)]),
    "kiln_model_num_inputs": (Status, [Handle, P(c_int32)]),
    "kiln_model_num_outputs": (Status, [Handle, P(c_int32)]),
    "kiln_model_input_info": (Status, [Handle, c_int32, P(c_char_p), P(DLTensor)]),
    "kiln_model_output_info": (Status, [Handle, c_int32, P(DLTensor)]),
    "kiln_model_output_name": (Status, [Handle, c_int32, P(c_char_p)]),  # C ABI version 3
    "kiln_model_input_dim_name": (Status, [Handle, c_int32, c_int32, P(c_char_p)]),
    "kiln_model_output_dim_name": (Status, [Handle, c_int32, c_int32, P(c_char_p)]),
    "kiln_optimize_options_init": (None, [P(KilnOptimizeOptions)]),
    "kiln_model_optimize": (Status, [Handle, P(KilnOptimizeOptions), P(Handle)]),
    "kiln_pass_count": (c_int32, []),
    "kiln_pass_name": (c_char_p, [c_int32]),
    "kiln_compile_options_init": (None, [P(KilnCompileOptions)]),
    "kiln_model_compile": (Status, [Handle, P(KilnCompileOptions), c_char_p,
                                    P(KilnCompileReport)]),
    "kiln_model_emit": (Status, [Handle, P(KilnCompileOptions), ctypes.c_int, P(c_void_p),
                                 P(KilnCompileReport)]),
    "kiln_model_to_dot": (Status, [Handle, P(c_void_p)]),
    "kiln_model_evaluate": (Status, [Handle, P(P(DLTensor)), c_int32,
                                     P(P(P(DLManagedTensor))), P(c_int32)]),
}

# Every function this package declares: tests/test_capi.py compares these
# names (and argument counts) with the header.
DECLARED = {**_RUNTIME, **_COMPILER}

# ------------------------------------------------------------------- loading


class Library:
    """The loaded library: its path, whether it has the compiler, and the
    bound functions as attributes (``lib.kiln_session_run(...)``)."""

    def __init__(self, path: str, cdll: ctypes.CDLL) -> None:
        self.path = path
        self.cdll = cdll
        for name, (restype, argtypes) in _RUNTIME.items():
            fn = getattr(cdll, name)
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)
        self.has_compiler = hasattr(cdll, "kiln_model_compile")
        if self.has_compiler:
            for name, (restype, argtypes) in _COMPILER.items():
                if not hasattr(cdll, name):
                    continue  # newer than the loaded library (see Model.warnings)
                fn = getattr(cdll, name)
                fn.restype = restype
                fn.argtypes = argtypes
                setattr(self, name, fn)


_lock = threading.Lock()
_library: Optional[Library] = None


def candidates() -> List[str]:
    """The paths (or bare names for the dynamic loader) tried, in order."""
    env = os.environ.get("KILN_LIBRARY")
    if env:
        return [env]
    bundled = Path(__file__).resolve().parent / "_lib"
    names = ["libkiln.so", "libkiln_runtime.so"]
    system = ["libkiln.so.0", "libkiln.so", "libkiln_runtime.so.0", "libkiln_runtime.so"]
    return [str(bundled / n) for n in names if (bundled / n).is_file()] + system


def library() -> Library:
    """The library, loaded on the first call (see the module docstring).

    Raises kiln.Error (NOT_FOUND) naming every place it looked."""
    global _library
    if _library is not None:
        return _library
    with _lock:
        if _library is None:
            tried = []
            for path in candidates():
                try:
                    cdll = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                except OSError as e:
                    tried.append("%s (%s)" % (path, e))
                    continue
                lib = Library(path, cdll)
                if lib.kiln_api_version() < MIN_API_VERSION:
                    from kiln.errors import Error, StatusCode

                    raise Error(StatusCode.UNIMPLEMENTED,
                                "%s has C ABI version %d; this package needs %d or later" %
                                (path, lib.kiln_api_version(), MIN_API_VERSION))
                _library = lib
                break
            else:
                from kiln.errors import Error, StatusCode

                raise Error(StatusCode.NOT_FOUND,
                            "cannot load the kiln library; tried: " + "; ".join(tried) +
                            ". Set KILN_LIBRARY to the path of libkiln.so, install a wheel "
                            "that bundles it (python/README.md), or put its directory on "
                            "LD_LIBRARY_PATH")
    return _library


def take_string(lib: Library, ptr: c_void_p) -> str:
    """Decodes a malloc'ed char* returned by the library and frees it."""
    if not ptr.value:
        return ""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", "replace")
    finally:
        lib.kiln_free(ptr)


def text(b: Optional[bytes]) -> str:
    return "" if b is None else b.decode("utf-8", "replace")
