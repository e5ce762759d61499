"""kiln.profile: what Session.profile and Session.benchmark measured.

    profile = session.profile(warmup=5, repeat=20)
    for row in profile:                      # ProfileRow(name, op, time_us)
        print(row.name, row.op, row.time_us)
    print(profile.table)                     # the debug executor's table
    open("trace.json", "w").write(profile.chrome_trace)

Both are plain data copied out of the C objects, which are released at once.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Iterator, List, NamedTuple

from kiln import _capi
from kiln.errors import check


class ProfileRow(NamedTuple):
    """One kernel node, in execution order: its name, its fused operators and
    its time (the median over the profile's repeats), in microseconds."""

    name: str
    op: str
    time_us: float


@dataclass(frozen=True)
class Profile:
    """A per-node profile (kiln_session_profile_with): rows, their total in
    microseconds (the sum of node times, not the run's wall time), the text
    table and the Chrome trace-event JSON (chrome://tracing, Perfetto)."""

    rows: List[ProfileRow]
    total_us: float
    table: str
    chrome_trace: str

    def __iter__(self) -> Iterator[ProfileRow]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> ProfileRow:
        return self.rows[index]

    @staticmethod
    def _take(lib: _capi.Library, handle: _capi.Handle) -> "Profile":
        """Copies a KilnProfile and releases it."""
        try:
            rows = []
            for i in range(lib.kiln_profile_num_nodes(handle)):
                name, op, us = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_double()
                check(lib, lib.kiln_profile_node(handle, i, ctypes.byref(name), ctypes.byref(op),
                                                 ctypes.byref(us)))
                rows.append(ProfileRow(_capi.text(name.value), _capi.text(op.value), us.value))
            table, trace = ctypes.c_void_p(), ctypes.c_void_p()
            check(lib, lib.kiln_profile_table(handle, ctypes.byref(table)))
            table_text = _capi.take_string(lib, table)
            check(lib, lib.kiln_profile_chrome_trace(handle, ctypes.byref(trace)))
            return Profile(rows, lib.kiln_profile_total_us(handle), table_text,
                           _capi.take_string(lib, trace))
        finally:
            lib.kiln_profile_release(handle)


@dataclass(frozen=True)
class BenchmarkResult:
    """Session.benchmark: timed runs in milliseconds (population std), and the
    run as one line of TVM's benchmark log format v0.1 (JSON)."""

    mean_ms: float
    std_ms: float
    min_ms: float
    max_ms: float
    repeat: int
    log_line: str
