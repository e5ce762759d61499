"""kiln.errors: the one exception kiln raises, and the status codes it carries.

Every failing C call returns a KilnStatus (docs/c_api.md section 2.1); the
package turns it into ``kiln.Error`` with the same code and message and frees
the status. Checks the package makes itself (a NumPy dtype kiln has no
equivalent for, a closed object) raise ``kiln.Error`` too, with the code the C
API would have used::

    try:
        session.run({"input": np.zeros((1, 3, 16, 16), np.float32)})
    except kiln.Error as e:
        assert e.code == kiln.StatusCode.INVALID_ARGUMENT
        print(e.message)
"""

from __future__ import annotations

import enum


class StatusCode(enum.IntEnum):
    """KilnStatusCode (kiln/status.h): absl::StatusCode numbering."""

    OK = 0
    INVALID_ARGUMENT = 3
    NOT_FOUND = 5
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    DATA_LOSS = 15


class Error(Exception):
    """A failed kiln call: ``code`` (a StatusCode) and ``message`` (what was
    wrong and where, as the C library wrote it)."""

    def __init__(self, code: int, message: str) -> None:
        try:
            self.code = StatusCode(code)
        except ValueError:  # a code from a newer library: keep the number
            self.code = code  # type: ignore[assignment]
        self.message = message
        name = self.code.name if isinstance(self.code, StatusCode) else "CODE_%d" % code
        super().__init__("%s: %s" % (name, message))

    def __reduce__(self):  # picklable (multiprocessing hands errors back)
        return (type(self), (int(self.code), self.message))


def check(lib, status) -> None:
    """Raises Error for a non-NULL KilnStatus*, freeing it; returns for NULL."""
    if status:
        code = lib.kiln_status_code(status)
        raw = lib.kiln_status_message(status)
        lib.kiln_status_free(status)
        raise Error(code, raw.decode("utf-8", "replace") if raw else "")
