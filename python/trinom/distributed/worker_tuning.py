"""A Dask worker process set up for pricing, once (issue 27).

Dask's nanny starts every worker with ``MALLOC_TRIM_THRESHOLD_=65536`` and ``OMP_NUM_THREADS=1`` (its
``distributed.nanny.pre-spawn-environ``), to hand memory back to the system at once and to keep libraries
from starting a thread per core in every worker. For a pricing worker both cost time:

* glibc's malloc, told any threshold, stops adapting its mapping threshold: every block over 128 KiB (a column
  of a hundred thousand trees) is then a fresh mapping whose pages fault in one by one, on every call. The
  host side of a GPU pricing ran 10-15% slower in a worker than in one process (H200, issue 27's table).
  :func:`tune_worker` lets malloc keep freed blocks up to 32 MiB (its largest mapping threshold) for reuse, and
  trims its heap only past 256 MiB free.
* pyarrow sizes its thread pool by ``OMP_NUM_THREADS``: one thread decodes and encodes a worker's Parquet row
  groups. :func:`tune_worker` gives it the worker's share of its host's cores.

:func:`trinom.distribute` and the Parquet file-to-file tasks call it on their workers; it runs once a process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

#: glibc's mallopt parameters.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: Blocks up to this size come from malloc's heap and are reused (glibc refuses more: 32 MiB on 64-bit systems).
MMAP_THRESHOLD = 32 << 20
#: Free heap memory past this is handed back to the system.
TRIM_THRESHOLD = 256 << 20

_DONE: list[int | None] = []


def tune_worker(workers_on_host: int = 1) -> dict[str, object]:
    """Set up this process for pricing (see the module), once; ``workers_on_host``: the worker processes sharing
    its host's cores. What was done, as a dict (``malloc``: whether glibc took the thresholds; ``arrow_threads``:
    pyarrow's pool, None where pyarrow is not installed)."""
    if _DONE:
        return {"malloc": bool(_DONE[0]), "arrow_threads": _DONE[1] if len(_DONE) > 1 else None}
    malloc = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            malloc = bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
                libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
        except (OSError, AttributeError):  # not glibc (musl, another libc): nothing to set
            malloc = False
    threads: int | None = None
    try:
        import pyarrow

        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        threads = max(1, cores // max(1, int(workers_on_host)))
        pyarrow.set_cpu_count(threads)
    except ImportError:
        threads = None
    _DONE.extend([int(malloc), threads])
    return {"malloc": malloc, "arrow_threads": threads}


def workers_per_host(client: object) -> dict[str, int]:
    """Per worker address, how many of the client's workers share its host."""
    workers = client.scheduler_info().get("workers", {})  # type: ignore[attr-defined]
    hosts: dict[str, int] = {}
    for info in workers.values():
        hosts[info.get("host", "")] = hosts.get(info.get("host", ""), 0) + 1
    return {address: hosts[info.get("host", "")] for address, info in workers.items()}


def tune_workers(client: object) -> dict[str, dict[str, object]]:
    """:func:`tune_worker` on every worker of ``client`` (each with its host's count of workers)."""
    shares = workers_per_host(client)
    done: dict[str, dict[str, object]] = {}
    for count in sorted(set(shares.values())):
        chosen = [address for address, n in shares.items() if n == count]
        done.update(client.run(tune_worker, count, workers=chosen))  # type: ignore[attr-defined]
    return done


__all__ = ["tune_worker", "tune_workers", "workers_per_host"]
