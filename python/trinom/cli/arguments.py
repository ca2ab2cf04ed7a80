"""The command line's shared pieces: argument types, ``--out`` paths, the progress bar, ``--dask`` clusters,
the book file a command reads."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..instruments.bond import _STEP_LIMIT as BOND_STEP_LIMIT
from ..io.book_files import BookFile, holds_bonds, read_book_file

#: How long ``--dask ADDRESS`` waits for the scheduler to answer before giving up (exit 3).
DASK_CONNECT_SECONDS = 5.0
_DASK_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+]*://\S+|[A-Za-z0-9_.\-\[\]]+:\d+)$")


class ProgressBar:
    """A progress bar on stderr that appears only once a job has run for ``delay`` seconds; counts work."""

    def __init__(self, label: str, delay: float = 2.0, enabled: bool | None = None, unit: str = "G node updates",
                 scale: float = 1e9):
        self.label, self.delay, self.start = label, delay, time.perf_counter()
        self.unit, self.scale = unit, scale
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.shown = False

    def __call__(self, done: float, total: float) -> None:
        elapsed = time.perf_counter() - self.start
        if not self.enabled or (elapsed < self.delay and done < total):
            return
        if done >= total and not self.shown:
            return
        filled = int(30 * done / max(total, 1))
        precision = 2 if self.scale != 1 else 0
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] {done / self.scale:.{precision}f}/"
                         f"{total / self.scale:.{precision}f} {self.unit}, {elapsed:.0f} s")
        self.shown = True
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


class OutPath(argparse.Action):
    """``--out`` as a path, remembering whether it was written with a trailing ``/`` (a folder of parts), which
    ``pathlib`` drops."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, Path(values))
        namespace.out_folder = str(values).endswith(("/", os.sep))


def whole_number(least: int) -> Any:
    """An argparse type: a whole number >= ``least`` (argparse turns the error into exit status 2)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be >= {least}, got {value}")
        return value
    return parse


def positive_number(text: str) -> float:
    """An argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def book_kind(args: argparse.Namespace, kind: str | None = None) -> bool:
    """Whether the book file holds bonds (``--format``, else the file says), after checking the step limit: the
    bond engines take trees of at most 65535 steps, so a larger ``--max-steps`` for bonds is an error, not cut."""
    bonds = holds_bonds(args.portfolio, kind or args.format)
    if bonds and args.max_steps > BOND_STEP_LIMIT:
        raise InputError([(None, "--max-steps", f"--max-steps {args.max_steps}: the bond engines take trees of at "
                           f"most {BOND_STEP_LIMIT} steps (the paper's format stores steps as uint16)")])
    return bonds


def read_book(args: argparse.Namespace, bonds: bool) -> BookFile:
    """The book of ``args.portfolio`` (of the kind :func:`book_kind` found), its curves and its rows' ids."""
    return read_book_file(args.portfolio, "bonds" if bonds else "options", args.errors, getattr(args, "yield_file", None))


def check_dask(spec: str | None) -> None:
    """``--dask`` is ``local:N`` (N >= 1) or a scheduler's address (``tcp://host:8786``, ``host:8786``); not given
    (None): no cluster. Given empty (``--dask ""``, an unset shell variable) it is an error, not a local run."""
    if spec is None:
        return
    if not spec.strip():
        raise InputError([(None, "--dask", "--dask is empty: give local:N (N worker processes here) or a running "
                           "scheduler's address, such as tcp://host:8786, or leave --dask out to price here")])
    if spec.startswith("local:"):
        workers = spec.removeprefix("local:")
        if not workers.isdigit() or int(workers) < 1:
            raise InputError([(None, "--dask", f"local:N needs a number of workers N >= 1, got {spec!r}")])
        return
    port = spec.rsplit(":", 1)[-1].split("/")[0]
    if not _DASK_ADDRESS.match(spec) or (port.isdigit() and not 0 < int(port) < 65536):
        raise InputError([(None, "--dask", f"--dask {spec!r}: give local:N (N worker processes here) or a running "
                           "scheduler's address, such as tcp://host:8786")])


@contextlib.contextmanager
def dask_client(spec: str | None) -> Iterator[Any]:
    """None without ``--dask``; else a Dask client of a local cluster (``local:N``) or of a scheduler's address,
    closed (with its cluster) afterwards. A scheduler that does not answer within :data:`DASK_CONNECT_SECONDS` is a
    ``RuntimeError`` (exit 3)."""
    check_dask(spec)
    if spec is None:
        yield None
        return
    try:
        import distributed
    except ImportError:
        raise InputError([(None, "--dask", "Dask is not installed: pip install 'dask[distributed]'")]) from None
    if spec.startswith("local:"):
        workers = int(spec.removeprefix("local:"))
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            print(f"trinom: {workers} Dask workers here; dashboard {client.dashboard_link}", file=sys.stderr)
            yield client
        return
    try:
        connected = distributed.Client(spec, timeout=f"{DASK_CONNECT_SECONDS}s")
    except (OSError, TimeoutError, ValueError) as err:
        raise RuntimeError(f"--dask {spec}: no Dask scheduler answered within {DASK_CONNECT_SECONDS:g} s "
                           f"({type(err).__name__}: {err})") from None
    with connected as client:
        print(f"trinom: Dask scheduler {spec}; dashboard {client.dashboard_link}", file=sys.stderr)
        yield client


def failures(bad: int, total: int, what: str) -> str:
    """The summary's note on failed rows (empty where none failed)."""
    return f", {bad} of {total} {what} failed (NaN; the error column says why)" if bad else ""
