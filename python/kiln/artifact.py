"""kiln.artifact: a loaded, validated compiled model (KilnArtifact).

    artifact = kiln.Artifact("resnet.so")       # checks everything first
    print(artifact.target, artifact.inputs)
    session = artifact.session(num_threads=2)   # one per thread

An Artifact is immutable and may be shared by threads and sessions. It needs
only the runtime (libkiln_runtime.so is enough). Closing it while sessions
are open defers the release until the last of them is closed.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import List, Optional, Union

from kiln import _capi
from kiln._dlpack import DLTensor
from kiln._owned import Borrowed
from kiln.errors import check
from kiln.tensor import TensorInfo


@dataclass(frozen=True)
class MemoryStats:
    """Bytes of one session's intermediate arena, and without storage sharing."""

    arena_bytes: int
    naive_bytes: int


class Artifact:
    """A compiled model loaded from its .so (kiln_artifact_load). A truncated,
    corrupted or foreign file raises kiln.Error (DATA_LOSS, UNIMPLEMENTED or
    NOT_FOUND) naming the file and the problem."""

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        lib = _capi.library()
        out = _capi.Handle()
        check(lib, lib.kiln_artifact_load(os.fsencode(os.fspath(path)), ctypes.byref(out)))
        self._lib = lib
        self._owned = Borrowed(out.value, lib.kiln_artifact_release, "artifact")
        self.path = os.fspath(path)
        self._inputs = self._infos(lib.kiln_artifact_num_inputs, lib.kiln_artifact_input_info)
        self._outputs = self._infos(lib.kiln_artifact_num_outputs,
                                    lib.kiln_artifact_output_info)

    def _infos(self, count, info) -> List[TensorInfo]:
        h = self._owned.get()
        result = []
        for i in range(count(h)):
            name, t = ctypes.c_char_p(), DLTensor()
            check(self._lib, info(h, i, ctypes.byref(name), ctypes.byref(t)))
            result.append(TensorInfo.from_dl(_capi.text(name.value), t))
        return result

    def close(self) -> None:
        """Releases the artifact now, or after its last session is closed."""
        owned = getattr(self, "_owned", None)
        if owned is not None:
            owned.close()

    __del__ = close

    def __enter__(self) -> "Artifact":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def inputs(self) -> List[TensorInfo]:
        """The inputs in index order: name, static shape, dtype."""
        return list(self._inputs)

    @property
    def outputs(self) -> List[TensorInfo]:
        return list(self._outputs)

    @property
    def target(self) -> str:
        """The target it was compiled for ("llvm -mcpu=...")."""
        return _capi.text(self._lib.kiln_artifact_target(self._owned.get()))

    @property
    def producer(self) -> str:
        return _capi.text(self._lib.kiln_artifact_producer(self._owned.get()))

    @property
    def graph_json(self) -> str:
        """The executor plan: TVM graph-executor JSON (docs/artifact.md)."""
        return _capi.text(self._lib.kiln_artifact_graph_json(self._owned.get()))

    @property
    def num_nodes(self) -> int:
        return self._lib.kiln_artifact_num_nodes(self._owned.get())

    def memory_stats(self) -> MemoryStats:
        arena, naive = ctypes.c_uint64(), ctypes.c_uint64()
        self._lib.kiln_artifact_memory_stats(self._owned.get(), ctypes.byref(arena),
                                             ctypes.byref(naive))
        return MemoryStats(arena.value, naive.value)

    def session(self, num_threads: int = 0, pool: Optional["ThreadPool"] = None) -> "Session":
        """A new Session (see kiln.Session)."""
        from kiln.session import Session

        return Session(self, num_threads=num_threads, pool=pool)

    def __repr__(self) -> str:
        return "kiln.Artifact(%r, inputs=%s, outputs=%s)" % (
            self.path, [i.name for i in self._inputs], [o.name for o in self._outputs])


from kiln.threadpool import ThreadPool  # noqa: E402  (for the annotation above)
