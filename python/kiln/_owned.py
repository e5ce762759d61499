"""kiln._owned: C objects that sessions borrow (internal).

docs/c_api.md: a shared thread pool must outlive the sessions using it (the
C runtime itself keeps a session's artifact alive). Python does not order
finalizers (the garbage collector may finalize an artifact before a session
that refers to it), so an artifact or pool closed while sessions still borrow
it is released when the last of them is released.
"""

from __future__ import annotations

import threading
from typing import Callable, Optional

from kiln.errors import Error, StatusCode


class Borrowed:
    """A handle released by `release` once closed and no longer borrowed."""

    def __init__(self, handle: int, release: Callable[[int], None], what: str) -> None:
        self._handle: Optional[int] = handle
        self._release = release
        self._what = what
        self._borrowers = 0
        self._closed = False
        self._lock = threading.RLock()  # a finalizer may run while this thread holds it

    def get(self) -> int:
        """The handle; kiln.Error (FAILED_PRECONDITION) once closed."""
        if self._closed or not self._handle:
            raise Error(StatusCode.FAILED_PRECONDITION, "the %s was closed" % self._what)
        return self._handle

    @property
    def closed(self) -> bool:
        return self._closed

    def borrow(self) -> int:
        with self._lock:
            handle = self.get()
            self._borrowers += 1
            return handle

    def give_back(self) -> None:
        with self._lock:
            self._borrowers -= 1
            self._release_if_done()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._release_if_done()

    def _release_if_done(self) -> None:
        if self._closed and self._borrowers == 0 and self._handle:
            handle, self._handle = self._handle, None
            self._release(handle)
