#!/usr/bin/env python3
"""Compile fut/ and cuda/ into the libraries trinom loads, rebuilding only what changed.

    python build.py            # everything that can be built here
    python build.py --list     # what would be built or is up to date, and why other targets are skipped
    python build.py --force    # rebuild everything

Outputs go to python/trinom/_lib/ (git-ignored):

* ``_futhark_<program>_<target>`` — a cffi module made by futhark-ffi from
  ``futhark <target> --library`` on ``fut/trinom-<program>.fut`` (``fut/bonds.fut`` for the
  program ``bonds``, ``fut/calibrate.fut`` for ``calibrate``: per-trade Hull-White calibration),
  for the targets c and multicore (always), opencl (when an OpenCL platform is present) and cuda
  (when a GPU and the CUDA toolkit are present);
* ``futhark_<program>_pyopencl.py`` — ``futhark pyopencl --library`` (when pyopencl is installed),
  for the option programs basic and flat only (the bond backend has no pyopencl target);
* ``libtrinom_cuda.so`` and its header ``trinom_cuda.h`` — every ``cuda/*.cu`` compiled by nvcc
  for sm_90 plus PTX (when nvcc and a GPU are present).

Each output has a stamp (a hash of its sources and command) in build/stamps/; an output whose
stamp matches is "up to date". A Futhark program's sources are its .fut file and the files it
imports, transitively (``import "x"``), so editing fut/bonds.fut does not rebuild the option
programs. Every target prints one line: built, up to date, or skipped (why).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
FUT_DIR, CUDA_DIR = ROOT / "fut", ROOT / "cuda"
LIB_DIR = ROOT / "python" / "trinom" / "_lib"
BUILD_DIR = ROOT / "build"
PROGRAMS = {"basic": FUT_DIR / "trinom-basic.fut", "flat": FUT_DIR / "trinom-flat.fut",
            "bonds": FUT_DIR / "bonds.fut", "fast": FUT_DIR / "fast.fut", "fastbonds": FUT_DIR / "fast-bonds.fut",
            "calibrate": FUT_DIR / "calibrate.fut"}
FFI_TARGETS = ("c", "multicore", "opencl", "cuda")
#: C compiler flags of the CPU targets (c, multicore): code for this machine's vector width, so that the
#: compiler vectorises the bond kernels' level loops (AVX2/AVX-512: about 1.7x faster than plain SSE2; the
#: results are the same bits, as ISO C keeps floating-point contraction off).  ``TRINOM_CPU_CFLAGS=-O3``
#: builds a library that runs on any x86-64.
CPU_CFLAGS = os.environ.get("TRINOM_CPU_CFLAGS", "-O3 -march=native")
#: Targets built per program: pyopencl only where a backend loads it (futhark-basic/flat's
#: ``target="pyopencl"``; python/trinom/engines/bonds_futhark.py has no pyopencl target).
PROGRAM_TARGETS = {"basic": (*FFI_TARGETS, "pyopencl"), "flat": (*FFI_TARGETS, "pyopencl"), "bonds": FFI_TARGETS,
                   "fast": FFI_TARGETS, "fastbonds": FFI_TARGETS, "calibrate": FFI_TARGETS}
CUDA_ARCH = os.environ.get("TRINOM_CUDA_ARCH", "90")
COMPAT_HEADER = ROOT / "tools" / "futhark_cuda13_compat.h"


class BuildError(RuntimeError):
    """A build step failed; the message says which and how to fix it."""


@dataclass
class Toolchain:
    """What this machine offers, and why a target cannot be built."""

    futhark: str | None
    nvcc: str | None
    gpu: bool
    opencl: bool
    pyopencl: bool

    @classmethod
    def detect(cls) -> Toolchain:
        futhark = os.environ.get("FUTHARK") or _which_first(str(ROOT / ".toolchain" / "bin" / "futhark"), "futhark")
        nvcc = os.environ.get("NVCC") or _which_first("nvcc", "/usr/local/cuda/bin/nvcc")
        gpu = Path("/dev/nvidia0").exists() or Path("/dev/nvidiactl").exists()
        return cls(futhark, nvcc, gpu, _opencl_platforms() > 0, _importable("pyopencl"))

    def why_not(self, target: str) -> str | None:
        """None if ``target`` can be built here, else the reason."""
        if target in (*FFI_TARGETS, "pyopencl") and not self.futhark:
            return "futhark not found (run `make setup`, which installs it into .toolchain/bin)"
        if target == "opencl" and not self.opencl:
            return "no OpenCL platform (apt-get install pocl-opencl-icd ocl-icd-opencl-dev, or a GPU driver)"
        if target == "pyopencl" and not self.pyopencl:
            return "pyopencl is not installed (pip install pyopencl mako)"
        if target in ("cuda", "cuda-kernels"):
            if not self.nvcc:
                return "nvcc not found (install the CUDA toolkit)"
            if not self.gpu:
                return "no NVIDIA GPU here (the CUDA sources are still compile-checked by the tests)"
        return None


def _which_first(*candidates: str) -> str | None:
    for c in candidates:
        found = shutil.which(c) if "/" not in c else (c if os.access(c, os.X_OK) else None)
        if found:
            return found
    return None


def _importable(module: str) -> bool:
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def _opencl_platforms() -> int:
    """Number of OpenCL platforms, asked through clinfo (or pyopencl when clinfo is absent)."""
    if shutil.which("clinfo"):
        out = subprocess.run(["clinfo", "-l"], capture_output=True, text=True).stdout
        return out.count("Platform #")
    probe = "import pyopencl as cl; print(len(cl.get_platforms()))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    return int(out.stdout.strip() or 0) if out.returncode == 0 else 0


# --- stamps -------------------------------------------------------------------------------------------
_IMPORT = re.compile(r'\bimport\s+"([^"]+)"')


def futhark_sources(program: Path) -> list[Path]:
    """``program`` and every .fut file it imports, transitively, sorted.

    Futhark's ``import "x"`` (also ``module m = import "x"``) names ``x.fut`` relative to the
    importing file; comments (``--`` to the end of the line) are ignored. An import that is not
    a file here (the prelude, or a typo that futhark itself will report) is skipped.
    """
    seen: set[Path] = set()
    todo = [program.resolve()]
    while todo:
        source = todo.pop()
        if source in seen or not source.is_file():
            continue
        seen.add(source)
        for line in source.read_text().splitlines():
            for name in _IMPORT.findall(line.split("--", 1)[0]):
                todo.append((source.parent / f"{name}.fut").resolve())
    return sorted(seen)


def _stamp_ok(name: str, sources: list[Path], command: list[str], outputs: list[Path]) -> tuple[bool, Path, str]:
    digest = hashlib.sha256(" ".join(command).encode())
    for src in sorted(sources):
        digest.update(src.name.encode() + src.read_bytes())
    stamp = BUILD_DIR / "stamps" / f"{name}.sha256"
    fresh = stamp.exists() and stamp.read_text() == digest.hexdigest() and all(o.exists() for o in outputs)
    return fresh, stamp, digest.hexdigest()


def _run(command: list[str], cwd: Path, what: str, env: dict[str, str] | None = None) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-25:])
        raise BuildError(f"{what} failed (exit {result.returncode}): {' '.join(command)}\n{tail}")


# --- one function per kind of build --------------------------------------------------------------------
def build_futhark_ffi(tools: Toolchain, program: str, target: str, force: bool, dry: bool = False) -> str:
    """``futhark <target> --library`` + futhark-ffi's cffi build -> ``_lib/_futhark_<program>_<target>*.so``."""
    name = f"futhark_{program}_{target}"
    source = PROGRAMS[program]
    command = [tools.futhark or "futhark", target, "--library", "-o", name, str(source)]
    outputs = sorted(LIB_DIR.glob(f"_{name}.*.so"))
    cflags = CPU_CFLAGS if target in ("c", "multicore") else ""
    fresh, stamp, digest = _stamp_ok(name, futhark_sources(source), [*command, f"CFLAGS={cflags}"],
                                     outputs or [LIB_DIR / f"_{name}.so"])
    if fresh and not force:
        return "up to date"
    if dry:
        return "would build"
    work = BUILD_DIR / "futhark" / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    _run(command, work, f"futhark {target} on {source.name}")
    env = dict(os.environ)
    if cflags:
        env["CFLAGS"] = f"{env.get('CFLAGS', '')} {cflags}".strip()
    if target == "cuda":
        cuda_home = Path(tools.nvcc or "/usr/local/cuda/bin/nvcc").resolve().parent.parent
        env["CFLAGS"] = (f"{env.get('CFLAGS', '')} -O3 -I{cuda_home}/include -include {COMPAT_HEADER} "
                         "-Wno-int-conversion").strip()
        env["LIBRARY_PATH"] = f"{cuda_home}/lib64:/usr/lib:{env.get('LIBRARY_PATH', '')}"
    ffi = "import sys; from futhark_ffi.build import main; sys.argv = ['build_futhark_ffi', sys.argv[1]]; main()"
    _run([sys.executable, "-c", ffi, name], work, f"futhark-ffi build of {name} (needs a C compiler: apt-get install gcc)", env)
    for old in LIB_DIR.glob(f"_{name}.*.so"):
        old.unlink()
    for built in work.glob(f"_{name}.*.so"):
        shutil.copy2(built, LIB_DIR / built.name)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest)
    return "built"


def build_futhark_pyopencl(tools: Toolchain, program: str, force: bool, dry: bool = False) -> str:
    """``futhark pyopencl --library`` -> ``_lib/futhark_<program>_pyopencl.py`` (pure Python + pyopencl)."""
    name = f"futhark_{program}_pyopencl"
    output = LIB_DIR / f"{name}.py"
    command = [tools.futhark or "futhark", "pyopencl", "--library", "-o", str(output.with_suffix("")), str(PROGRAMS[program])]
    fresh, stamp, digest = _stamp_ok(name, futhark_sources(PROGRAMS[program]), command, [output])
    if fresh and not force:
        return "up to date"
    if dry:
        return "would build"
    _run(command, ROOT, f"futhark pyopencl on {PROGRAMS[program].name}")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest)
    return "built"


def build_cuda_kernels(tools: Toolchain, force: bool, dry: bool = False) -> str:
    """nvcc: every ``cuda/*.cu`` -> ``_lib/libtrinom_cuda.so`` (sm_90 + PTX), header copied beside it.

    The sources are compiled in parallel (one nvcc per file; the f64 kernels take minutes alone),
    then linked into one shared library.
    """
    sources = sorted(CUDA_DIR.glob("*.cu"))
    if not sources:
        return "skipped (no cuda/*.cu sources yet)"
    output = LIB_DIR / "libtrinom_cuda.so"
    flags = [tools.nvcc or "nvcc", "-O3", "-std=c++17", "-Xcompiler", "-fPIC",
             f"-gencode=arch=compute_{CUDA_ARCH},code=[sm_{CUDA_ARCH},compute_{CUDA_ARCH}]"]
    headers = sorted(CUDA_DIR.glob("*.h")) + sorted(CUDA_DIR.glob("*.cuh"))
    fresh, stamp, digest = _stamp_ok("libtrinom_cuda", sources + headers, flags, [output])
    if fresh and not force:
        return "up to date"
    if dry:
        return "would build"
    objects = BUILD_DIR / "cuda"
    shutil.rmtree(objects, ignore_errors=True)
    objects.mkdir(parents=True)
    jobs = [([*flags, "-c", str(src), "-o", str(objects / f"{src.stem}.o")], f"nvcc on {src.name}") for src in sources]
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        for future in [pool.submit(_run, command, ROOT, what) for command, what in jobs]:
            future.result()
    _run([tools.nvcc or "nvcc", "-shared", *sorted(str(o) for o in objects.glob("*.o")), "-lcuda", "-o", str(output)],
         ROOT, "nvcc link of libtrinom_cuda.so")
    shutil.copy2(CUDA_DIR / "trinom_cuda.h", LIB_DIR / "trinom_cuda.h")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest)
    return "built"


def plan(tools: Toolchain) -> list[tuple[str, str | None]]:
    """Every target with None (buildable) or the reason it is skipped."""
    rows: list[tuple[str, str | None]] = []
    for program, source in PROGRAMS.items():
        for target in PROGRAM_TARGETS[program]:
            reason = tools.why_not(target) or (None if source.exists() else f"{source.name} does not exist yet")
            rows.append((f"futhark-{program}/{target}", reason))
    rows.append(("cuda kernels (libtrinom_cuda.so)", tools.why_not("cuda-kernels")))
    return rows


def remove_stale() -> list[str]:
    """Delete the pyopencl output (and stamp) of programs that no longer build one; their names."""
    removed = []
    for program, targets in PROGRAM_TARGETS.items():
        if "pyopencl" in targets:
            continue
        name = f"futhark_{program}_pyopencl"
        stale = [p for p in (LIB_DIR / f"{name}.py", BUILD_DIR / "stamps" / f"{name}.sha256") if p.exists()]
        for path in stale:
            path.unlink()
        if stale:
            removed.append(f"futhark-{program}/pyopencl")
    return removed


def build_one(tools: Toolchain, name: str, force: bool, dry: bool = False) -> str:
    """Build one planned target (``dry``: only say whether it is up to date); returns its status line."""
    if name.startswith("cuda kernels"):
        return build_cuda_kernels(tools, force, dry)
    program, target = name.removeprefix("futhark-").split("/")
    if target == "pyopencl":
        return build_futhark_pyopencl(tools, program, force, dry)
    return build_futhark_ffi(tools, program, target, force, dry)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="rebuild even when up to date")
    parser.add_argument("--list", action="store_true", help="show what would be built or is up to date, and why not")
    parser.add_argument("--only", help="build only targets whose name contains this text (e.g. 'multicore')")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="targets built at once")
    args = parser.parse_args(argv)
    tools = Toolchain.detect()
    LIB_DIR.mkdir(parents=True, exist_ok=True)
    (LIB_DIR / "__init__.py").write_text('"""Compiled libraries (made by build.py)."""\n')
    chosen = [(name, reason) for name, reason in plan(tools) if not args.only or args.only in name]
    for name, reason in chosen:
        if reason:
            print(f"  {name:40s} skipped: {reason}")
        elif args.list:
            print(f"  {name:40s} {build_one(tools, name, args.force, dry=True)}")
    todo = [] if args.list else [name for name, reason in chosen if not reason]
    if not args.list:
        for name in remove_stale():
            print(f"  {name:40s} removed (no longer built: nothing loads it)")
    failures = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {name: pool.submit(build_one, tools, name, args.force) for name in todo}
        for name, future in futures.items():  # report in plan order
            try:
                result = future.result()
            except BuildError as err:
                failures += 1
                result = f"FAILED\n{err}"
            print(f"  {name:40s} {result}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
