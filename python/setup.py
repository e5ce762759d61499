"""setup.py: what pyproject.toml cannot say on its own: carry the kiln library.

With ``KILN_SDK`` set to an SDK prefix (``bazel-bin/c_api/sdk`` after
``bazel build --config=opt //c_api:sdk``, or a prefix tools/dev/install.sh
wrote), its ``lib/libkiln.so`` and ``lib/libkiln_runtime.so`` are copied into
the built package as ``kiln/_lib/``, and the wheel is tagged for this
platform (it holds native code). ``.so`` files already placed in
``python/kiln/_lib/`` by hand are carried the same way. Without either the
package is pure Python and loads the library through ``$KILN_LIBRARY`` or
the system's loader (see python/README.md).
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARIES = ("libkiln.so", "libkiln_runtime.so")


def sdk_libraries():
    """The library files $KILN_SDK provides (an error if it names no SDK)."""
    sdk = os.environ.get("KILN_SDK")
    if not sdk:
        return []
    found = [os.path.join(sdk, "lib", n) for n in LIBRARIES
             if os.path.isfile(os.path.join(sdk, "lib", n))]
    if not found or not found[0].endswith("libkiln.so"):
        raise SystemExit("KILN_SDK=%s has no lib/libkiln.so: build //c_api:sdk "
                         "(bazel-bin/c_api/sdk) or name an installed kiln prefix" % sdk)
    return found


def bundled_by_hand():
    lib = os.path.join(HERE, "kiln", "_lib")
    return [n for n in LIBRARIES if os.path.isfile(os.path.join(lib, n))]


class BuildPy(build_py):
    """build_py, then the SDK's libraries into <build>/kiln/_lib/."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "kiln", "_lib")
        os.makedirs(target, exist_ok=True)
        for path in sdk_libraries():
            dest = os.path.join(target, os.path.basename(path))
            shutil.copyfile(path, dest)  # a copy, never a link into the SDK
            os.chmod(dest, 0o755)


class KilnDistribution(Distribution):
    def has_ext_modules(self):
        # A package carrying libkiln.so is not pure: the wheel gets a platform tag.
        return bool(sdk_libraries() or bundled_by_hand())


setup(cmdclass={"build_py": BuildPy}, distclass=KilnDistribution)
