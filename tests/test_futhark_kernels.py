"""The GPU code Futhark 0.25.27 generates for fut/fast.fut and fut/fast-bonds.fut keeps its levels where they
belong (no GPU needed).

Two traps found while making the `futhark` engine fast (issue 13, benches/RESULTS-futhark.md) are checked
on the CUDA backend's generated kernels: a level that Futhark moves to global memory (a `replicate` hoisted
out of the workgroup's map put the whole backward pass there, 4x slower), and the local memory a workgroup
needs, which `trinom.engines.futhark_fast.LOCAL_LEVELS` must match for the classes to fit OpenCL's 48 KiB.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from trinom.engines import futhark_fast

#: The global memory a grouped kernel may touch: options, the ten arrays and the prices; bonds, eighteen
#: arrays read (maturities is not), the cash flows' and curves' offsets, the prices, and one scratch array
#: through which Futhark builds the per-step table once per bond before copying it to local memory
#: (`#[sequential]` columns), the listed exercise points' offsets, counts, steps and prices, the cash flows' times and
#: the listed points' dates (issue 34). One more would be a level in global memory.
GLOBAL_ARRAYS = {"fast.fut": 11, "fast-bonds.fut": 28}


def futhark() -> str | None:
    found = shutil.which("futhark")
    local = ROOT / ".toolchain" / "bin" / "futhark"
    return found or (str(local) if local.exists() else None)


def generated_kernels(out: Path, program: str) -> dict[str, str]:
    """``{kernel name: its source with parameters}`` of the grouped entries' CUDA kernels of ``program``."""
    stem = program.removesuffix(".fut").replace("-", "_")
    subprocess.run([futhark(), "cuda", "--library", program, "-o", stem], cwd=out, check=True, capture_output=True,
                   text=True)
    lines = (out / f"{stem}.c").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("static const char *gpu_program[] = {"))
    pieces = [lines[start].split("{", 1)[1]]
    for line in lines[start + 1:]:
        if not line.lstrip().startswith('"'):
            break
        pieces.append(line)
    source = "".join(ast.literal_eval(f'"{piece}"')
                     for piece in re.findall(r'"((?:[^"\\]|\\.)*)"', "\n".join(pieces), re.S))
    kernels = {}
    for match in re.finditer(r"void (\w*grouped(?:32|64)\w*)\(", source):
        end = source.find("FUTHARK_KERNEL", match.end())
        kernels[match.group(1)] = source[match.start():end if end >= 0 else len(source)]
    return kernels


@pytest.fixture(scope="module")
def grouped_kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """The grouped kernels of fut/fast.fut and fut/fast-bonds.fut, by program."""
    if futhark() is None:
        pytest.skip("futhark not found (make setup-futhark)")
    out = tmp_path_factory.mktemp("futhark-cuda")
    for source in (ROOT / "fut").glob("*.fut"):
        shutil.copy(source, out)
    kernels = {program: generated_kernels(out, program) for program in GLOBAL_ARRAYS}
    assert len(kernels["fast.fut"]) == len(kernels["fast-bonds.fut"]) == 2, kernels.keys()
    return kernels


def test_grouped_kernels_touch_no_global_memory_but_inputs_and_prices(grouped_kernels):
    for program, kernels in grouped_kernels.items():
        for name, source in kernels.items():
            parameters = source[:source.index(")")]
            assert parameters.count("__global unsigned char *") == GLOBAL_ARRAYS[program], name


def test_grouped_kernels_hold_as_many_levels_in_local_memory_as_the_classes_assume(grouped_kernels):
    for name, source in grouped_kernels["fast.fut"].items():
        levels = re.findall(r"volatile __local unsigned char \*\w+_backing_\d+ =", source)
        assert len(levels) == futhark_fast.LOCAL_LEVELS, name



@pytest.mark.parametrize("program,compiles", [("nested-allocation.fut", False), ("nested-allocation-workaround.fut", True)])
def test_the_nested_allocation_reproducer_still_shows_the_limitation(tmp_path, program, compiles):
    """fut/repro/: Futhark 0.25.27's GPU backends refuse an `if` between two arrays of a map element's own
    size; one `tabulate` choosing per element compiles. (If the first starts compiling, the limitation is
    gone and fast.fut may be written more plainly.)"""
    if futhark() is None:
        pytest.skip("futhark not found (make setup-futhark)")
    shutil.copy(ROOT / "fut" / "repro" / program, tmp_path)
    run = subprocess.run([futhark(), "cuda", "--library", program, "-o", "repro"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert (run.returncode == 0) == compiles, run.stderr[-500:]
    if not compiles:
        assert "Cannot handle nested allocation" in run.stderr
