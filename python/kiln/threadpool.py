"""kiln.threadpool: a CPU thread pool shared by sessions (KilnThreadPool).

By default every session makes its own pool. Many concurrent sessions should
share one (docs/c_api.md section 7.12)::

    pool = kiln.ThreadPool(4)
    sessions = [artifact.session(pool=pool) for _ in range(8)]

The pool lives until it is closed (or garbage) and no session uses it.
"""

from __future__ import annotations

import ctypes

from kiln import _capi
from kiln._owned import Borrowed
from kiln.errors import Error, StatusCode

# KILN_KERNEL_* return codes of kiln_thread_pool_create -> status codes.
_KERNEL_CODES = {-1: StatusCode.INVALID_ARGUMENT, -2: StatusCode.RESOURCE_EXHAUSTED,
                 -3: StatusCode.INTERNAL}


def default_num_threads() -> int:
    """The thread count of a default pool: $KILN_NUM_THREADS, else the CPUs
    this process may run on."""
    return _capi.library().kiln_thread_pool_default_num_threads()


class ThreadPool:
    """A pool of `num_threads` threads, counting the caller's (0: the default
    count, 1: no workers). Thread-safe: any number of sessions may use it."""

    def __init__(self, num_threads: int = 0) -> None:
        lib = _capi.library()
        out = _capi.Handle()
        rc = lib.kiln_thread_pool_create(num_threads, ctypes.byref(out))
        if rc != 0:
            raise Error(_KERNEL_CODES.get(rc, StatusCode.INTERNAL),
                        "kiln_thread_pool_create(%d) failed with code %d (num_threads must be "
                        "0..1024)" % (num_threads, rc))
        self._lib = lib
        self._owned = Borrowed(out.value, lib.kiln_thread_pool_destroy, "thread pool")

    @property
    def num_threads(self) -> int:
        return self._lib.kiln_thread_pool_num_threads(self._owned.get())

    def close(self) -> None:
        """Destroys the pool now, or after the last session using it is closed."""
        owned = getattr(self, "_owned", None)
        if owned is not None:
            owned.close()

    __del__ = close

    def __enter__(self) -> "ThreadPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
