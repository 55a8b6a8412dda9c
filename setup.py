"""Builds the `_vidmap` extension with the project's CMake and installs the `vidmap` package.

The CMake build folder is $VIDMAP_BUILD_DIR when set (scripts/test.sh passes the project's
build/, so nothing is compiled twice), else build/pip. CMake options can be added through
$VIDMAP_CMAKE_ARGS (e.g. "-DVIDMAP_CUDA=OFF").
"""

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(os.environ.get("VIDMAP_BUILD_DIR", ROOT / "build" / "pip")).resolve()
        build.mkdir(parents=True, exist_ok=True)
        args = ["cmake", "-S", str(ROOT), "-B", str(build), "-DVIDMAP_PYTHON=ON"]
        if not (build / "CMakeCache.txt").exists():
            args += ["-G", "Ninja"] if shutil.which("ninja") else []
            args += ["-DCMAKE_BUILD_TYPE=Release", f"-DPython3_EXECUTABLE={sys.executable}"]
            if shutil.which("ccache"):
                args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache",
                         "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"]
        args += shlex.split(os.environ.get("VIDMAP_CMAKE_ARGS", ""))
        subprocess.run(args, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.run(["cmake", "--build", str(build), "-t", "_vidmap", "-j", jobs], check=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build / "python" / "vidmap" / f"_vidmap{suffix}"
        if not built.exists():
            raise RuntimeError(f"{built} was not built (is pybind11 installed for "
                               f"{sys.executable}? python3-pybind11 on Debian)")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


# setuptools' own scratch files go to a folder of their own under build/.
setup(ext_modules=[Extension("vidmap._vidmap", sources=[])], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": str(ROOT / "build" / "setuptools")}})
