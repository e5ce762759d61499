"""kiln: compile and run deep-learning models from Python (over libkiln.so's C ABI).

    import kiln, numpy as np
    model = kiln.load_onnx("examples/resnet_mini.onnx")
    model.compile("/tmp/resnet_mini.so")
    session = kiln.Artifact("/tmp/resnet_mini.so").session()
    outputs = session.run({"input": np.load("examples/resnet_mini_input.npy")})

Objects: Model (import, optimize, compile: needs libkiln.so), Artifact (a
compiled .so, loaded and validated), Session (inputs, run, outputs, profile,
benchmark), Tensor (DLPack in and out), ThreadPool (shared by sessions).
Every failure raises kiln.Error with the C status code and message.

The package calls nothing but the C ABI documented in docs/c_api.md, through
ctypes. Which library it loads, and how a wheel carries it: python/README.md
(``KILN_LIBRARY``, ``kiln/_lib/``, or the system's loader path).
"""

from kiln.artifact import Artifact, MemoryStats
from kiln.errors import Error, StatusCode
from kiln.model import (CompileReport, Model, PassEvent, load, load_onnx, load_onnx_bytes, parse,
                        passes)
from kiln.profile import BenchmarkResult, Profile, ProfileRow
from kiln.session import Session
from kiln.tensor import Tensor, TensorInfo, from_dlpack
from kiln.threadpool import ThreadPool, default_num_threads

__version__ = "0.1.0"

__all__ = [
    "API_VERSION", "MIN_API_VERSION", "Artifact", "BenchmarkResult", "CompileReport", "Error", "MemoryStats",
    "Model", "PassEvent", "Profile", "ProfileRow", "Session", "StatusCode", "Tensor",
    "TensorInfo", "ThreadPool", "api_version", "default_num_threads", "from_dlpack",
    "library_path", "load", "load_onnx", "load_onnx_bytes", "parse", "passes", "version",
]

# The C ABI version the package was written against; it loads libraries of
# version MIN_API_VERSION and later (Model.warnings needs version 2).
from kiln._capi import API_VERSION, MIN_API_VERSION


def version() -> str:
    """The loaded library's version string ("0.1.0")."""
    from kiln import _capi

    return _capi.text(_capi.library().kiln_runtime_version())


def api_version() -> int:
    """The loaded library's C ABI version (kiln_api_version); at least MIN_API_VERSION."""
    from kiln import _capi

    return int(_capi.library().kiln_api_version())


def library_path() -> str:
    """The path (or name) of the kiln library this process loaded."""
    from kiln import _capi

    return _capi.library().path
