"""Process set-up shared by the training / fixture scripts.

* Single-threaded, deterministic torch (the machine has 2 shared cores).
* If Debian's OpenBLAS is installed (apt-get install libopenblas0-pthread) the script
  re-executes itself with that BLAS first on LD_LIBRARY_PATH: Debian's torch 1.13 calls
  whatever libblas.so.3 the system alternative points to, and the reference BLAS is ~5x
  slower for training. The system-wide alternative is not touched. Pass --no-openblas (or
  set ATTNSCOPE_NO_OPENBLAS=1) to keep the default BLAS.
"""

import os
import sys

OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-pthread"


def setup(threads=1):
    if ("--no-openblas" in sys.argv) or os.environ.get("ATTNSCOPE_NO_OPENBLAS"):
        if "--no-openblas" in sys.argv:
            sys.argv.remove("--no-openblas")
    elif (os.path.exists(os.path.join(OPENBLAS_DIR, "libblas.so.3"))
          and OPENBLAS_DIR not in os.environ.get("LD_LIBRARY_PATH", "").split(":")):
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = OPENBLAS_DIR + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        env["OPENBLAS_NUM_THREADS"] = str(threads)
        env["OMP_NUM_THREADS"] = str(threads)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    import torch
    torch.set_num_threads(threads)
    return blas_name()


def blas_name():
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if "libblas.so" in line or "libopenblas" in line:
                    return line.split()[-1]
    except OSError:
        pass
    return "unknown"
