"""The GPU code Futhark 0.25.27 generates for fut/fast.fut keeps its levels where they belong (no GPU needed).

Two traps found while making the `futhark` engine fast (issue 13, benches/RESULTS-futhark.md) are checked
on the CUDA backend's generated kernels: a level that Futhark moves to global memory (a `replicate` hoisted
out of the workgroup's map put the whole backward pass there, 4x slower), and the local memory a workgroup
needs, which `trinom.backends.futhark_fast.LOCAL_LEVELS` must match for the classes to fit OpenCL's 48 KiB.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess

import pytest
from conftest import ROOT
from trinom.backends import futhark_fast

#: The entry arrays (ten) and the prices: the only global memory a grouped kernel may touch.
GLOBAL_ARRAYS = 11


def futhark() -> str | None:
    found = shutil.which("futhark")
    local = ROOT / ".toolchain" / "bin" / "futhark"
    return found or (str(local) if local.exists() else None)


@pytest.fixture(scope="module")
def grouped_kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``{kernel name: its source with parameters}`` of the grouped entries' CUDA kernels."""
    compiler = futhark()
    if compiler is None:
        pytest.skip("futhark not found (make setup-futhark)")
    out = tmp_path_factory.mktemp("futhark-cuda")
    for source in (ROOT / "fut").glob("*.fut"):
        shutil.copy(source, out)
    subprocess.run([compiler, "cuda", "--library", "fast.fut", "-o", "fast_cuda"], cwd=out, check=True,
                   capture_output=True, text=True)
    lines = (out / "fast_cuda.c").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("static const char *gpu_program[] = {"))
    pieces = [lines[start].split("{", 1)[1]]
    for line in lines[start + 1:]:
        if not line.lstrip().startswith('"'):
            break
        pieces.append(line)
    program = "".join(ast.literal_eval(f'"{piece}"')
                      for piece in re.findall(r'"((?:[^"\\]|\\.)*)"', "\n".join(pieces), re.S))
    kernels = {}
    for match in re.finditer(r"void (grouped(?:32|64)\w*)\(", program):
        end = program.find("FUTHARK_KERNEL", match.end())
        kernels[match.group(1)] = program[match.start():end if end >= 0 else len(program)]
    assert {name[:9] for name in kernels} == {"grouped32", "grouped64"}, sorted(kernels)
    return kernels


def test_grouped_kernels_touch_no_global_memory_but_inputs_and_prices(grouped_kernels):
    for name, source in grouped_kernels.items():
        parameters = source[:source.index(")")]
        assert parameters.count("__global unsigned char *") == GLOBAL_ARRAYS, name


def test_grouped_kernels_hold_as_many_levels_in_local_memory_as_the_classes_assume(grouped_kernels):
    for name, source in grouped_kernels.items():
        levels = re.findall(r"volatile __local unsigned char \*\w+_backing_\d+ =", source)
        assert len(levels) == futhark_fast.LOCAL_LEVELS, name

