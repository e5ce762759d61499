"""Where the tests find their data (python/run_test.sh sets the variables;
without them the repository's own files are used, for a run by hand):

    KILN_LIBRARY         libkiln.so (read by the kiln package itself)
    KILN_TEST_MODEL      examples/resnet_mini.onnx
    KILN_TEST_INPUT      examples/resnet_mini_input.npy
    KILN_TEST_EXPECTED   examples/resnet_mini_output.npy (NumPy's outputs)
    KILN_INCLUDE         the include roots of kiln/kiln.h, joined by ':'
    TEST_TMPDIR          scratch space (Bazel sets it)
"""

import os
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def env_path(name: str, default: Path) -> str:
    return os.environ.get(name) or str(default)


MODEL = env_path("KILN_TEST_MODEL", REPO / "examples" / "resnet_mini.onnx")
INPUT = env_path("KILN_TEST_INPUT", REPO / "examples" / "resnet_mini_input.npy")
EXPECTED = env_path("KILN_TEST_EXPECTED", REPO / "examples" / "resnet_mini_output.npy")
INCLUDE = [p for p in os.environ.get(
    "KILN_INCLUDE", "%s:%s" % (REPO / "c_api" / "include", REPO / "runtime_c" / "include")
).split(":") if p]


def scratch(prefix: str) -> str:
    """A new temporary directory (under $TEST_TMPDIR when set)."""
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TEST_TMPDIR") or None)
