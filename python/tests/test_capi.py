"""The package's ctypes declarations against the real headers.

kiln/_capi.py and kiln/_dlpack.py are written by hand; this test keeps them
honest: every declared function exists in kiln/kiln.h (preprocessed with the
C compiler) with the same number of parameters, every header function is
either declared or listed below as deliberately left out, and every struct's
size, field offsets and field sizes equal what the C compiler computes.
"""

import ctypes
import os
import re
import shutil
import subprocess
import sys
import unittest

import kiln  # noqa: F401  (imports the declarations)
from kiln import _capi, _dlpack
from _paths import INCLUDE, scratch

# Functions the package does not call, and why.
NOT_BOUND = {
    "kiln_status_create": "variadic; statuses are only read from Python",
    "kiln_session_profile": "profile_with(NULL) is the same call",
    "kiln_session_debug_dump": "debug_dump_with(NULL) is the same call",
    "kiln_session_set_input_index": "indices are resolved to names in Python",
    "kiln_npy_write": "NumPy writes .npy files",
    "kiln_npy_read": "NumPy reads .npy files",
    "kiln_npy_release": "NumPy reads .npy files",
    "kiln_checksum64": "artifact-format tooling, not an application call",
    "kiln_elf_find_symbol": "artifact-format tooling, not an application call",
    "kiln_kernel_context_create": "used by executors, not applications",
    "kiln_kernel_context_destroy": "used by executors, not applications",
    "kiln_kernel_context_error": "used by executors, not applications",
    "kiln_kernel_context_clear_error": "used by executors, not applications",
    "kiln_parallel_launch": "kernel ABI: called by generated kernels",
    "kiln_parallel_num_threads": "kernel ABI: called by generated kernels",
    "kiln_workspace_alloc": "kernel ABI: called by generated kernels",
    "kiln_workspace_free": "kernel ABI: called by generated kernels",
    "kiln_kernel_error": "kernel ABI: called by generated kernels",
    "kiln_kernel_last_error": "kernel ABI: called by generated kernels",
}

STRUCTS = {
    "DLTensor": _dlpack.DLTensor,
    "DLManagedTensor": _dlpack.DLManagedTensor,
    "KilnInputShape": _capi.KilnInputShape,
    "KilnImportOptions": _capi.KilnImportOptions,
    "KilnOptimizeOptions": _capi.KilnOptimizeOptions,
    "KilnCompileOptions": _capi.KilnCompileOptions,
    "KilnCompileReport": _capi.KilnCompileReport,
    "KilnArtifactLoadOptions": _capi.KilnArtifactLoadOptions,
    "KilnSessionOptions": _capi.KilnSessionOptions,
    "KilnProfileOptions": _capi.KilnProfileOptions,
    "KilnBenchmarkOptions": _capi.KilnBenchmarkOptions,
    "KilnBenchmarkResult": _capi.KilnBenchmarkResult,
}


def cc() -> str:
    tool = os.environ.get("CC", "cc")
    if shutil.which(tool) is None:
        raise unittest.SkipTest("no C compiler (%s) to read the headers with" % tool)
    return tool


def include_flags():
    flags = ["-I" + p for p in INCLUDE]
    if os.path.isdir("/usr/include/dlpack"):
        flags.append("-I/usr/include")
    return flags


def header_functions():
    """{name: parameter count} of every kiln_* function kiln/kiln.h declares."""
    text = subprocess.run([cc(), "-std=c11", "-E", "-P", *include_flags(), "-x", "c", "-"],
                          input='#include "kiln/kiln.h"\n', capture_output=True, text=True,
                          check=True).stdout
    found = {}
    for m in re.finditer(r"\b(kiln_[a-z0-9_]+)\s*\(", text):
        depth, i = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        params, depth, count = text[m.end():i - 1].strip(), 0, 1
        for ch in params:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            count += ch == "," and depth == 0
        found[m.group(1)] = 0 if params in ("", "void") else count
    return found


class HeaderTest(unittest.TestCase):
    def test_functions_match_the_header(self):
        header = header_functions()
        self.assertGreater(len(header), 50)
        for name, (_, argtypes) in sorted(_capi.DECLARED.items()):
            self.assertIn(name, header, "%s is declared in kiln/_capi.py but not in kiln.h" % name)
            self.assertEqual(len(argtypes), header[name], "%s: parameter count" % name)
        unbound = set(header) - set(_capi.DECLARED)
        self.assertEqual(sorted(unbound - set(NOT_BOUND)), [],
                         "kiln.h functions neither bound nor listed in NOT_BOUND")
        self.assertEqual(sorted(set(NOT_BOUND) - set(header)), [],
                         "NOT_BOUND lists functions kiln.h no longer declares")

    def test_struct_layouts_match_the_compiler(self):
        lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "kiln/kiln.h"',
                 "int main(void) {"]
        for cname, cls in STRUCTS.items():
            lines.append('  printf("%s %%zu\\n", sizeof(%s));' % (cname, cname))
            for field, _ in cls._fields_:
                lines.append('  printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (
                    cname, field, cname, field))
                lines.append('  printf("%s.%s.size %%zu\\n", sizeof(((%s*)0)->%s));' % (
                    cname, field, cname, field))
        lines += ["  return 0;", "}"]
        d = scratch("kiln_layout_")
        src, exe = os.path.join(d, "layout.c"), os.path.join(d, "layout")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run([cc(), "-std=c11", *include_flags(), src, "-o", exe], check=True)
        c = dict(line.rsplit(" ", 1) for line in
                 subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split("\n")
                 if line)
        for cname, cls in STRUCTS.items():
            self.assertEqual(ctypes.sizeof(cls), int(c[cname]), "sizeof(%s)" % cname)
            if cname in _capi.STRUCT_SIZES:
                self.assertEqual(_capi.STRUCT_SIZES[cname], int(c[cname]), cname)
            for field, _ in cls._fields_:
                self.assertEqual(getattr(cls, field).offset, int(c["%s.%s" % (cname, field)]),
                                 "offsetof(%s, %s)" % (cname, field))
                self.assertEqual(getattr(cls, field).size, int(c["%s.%s.size" % (cname, field)]),
                                 "sizeof %s.%s" % (cname, field))


class FindTest(unittest.TestCase):
    def test_the_system_loader_finds_the_soname(self):
        # A machine with only the run-time file, lib/libkiln.so.0 (the
        # SONAME), on its library path: kiln loads it by that name.
        if any("/_lib/" in c for c in _capi.candidates()) or not os.environ.get("KILN_LIBRARY"):
            self.skipTest("a bundled library (wheel) or no KILN_LIBRARY to copy")
        lib = os.path.join(scratch("kiln_soname_"), "lib")
        os.makedirs(lib, exist_ok=True)
        shutil.copy(os.environ["KILN_LIBRARY"], os.path.join(lib, "libkiln.so.0"))
        env = {k: v for k, v in os.environ.items() if k != "KILN_LIBRARY"}
        env["LD_LIBRARY_PATH"] = lib
        package = os.path.dirname(os.path.dirname(os.path.abspath(kiln.__file__)))
        env["PYTHONPATH"] = package
        out = subprocess.run([sys.executable, "-c", "import kiln; print(kiln.library_path())"],
                             env=env, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "libkiln.so.0")


if __name__ == "__main__":
    unittest.main()
