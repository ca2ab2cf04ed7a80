"""A call run while one of its Dask workers is killed mid-task (tests of the distributed paths)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from trinom.worker_calls import running_calls


def run_killing_a_worker(client: Any, call: Callable[[], Any], *, task_prefix: str = "", settle: float = 0.0) -> tuple[
        dict[str, Any], int]:
    """Run ``call`` in a thread, kill (SIGKILL) a worker process as soon as one has a task (whose key starts with
    ``task_prefix``; with none, or a call sent straight to it by :mod:`trinom.worker_calls`) running, ``settle``
    seconds into it, and wait for the call: ``{"result": ...}`` or ``{"error": ...}``, and the killed process's id
    (the nanny starts a new worker in its place)."""
    pids = client.run(os.getpid)  # worker address -> process id
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = call()
        except BaseException as err:  # shown by the caller's assertions
            out["error"] = err

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.time() + 60
    busy: list[str] = []
    while not busy and time.time() < deadline:
        busy = [address for address, keys in client.processing().items()
                if any(str(k).startswith(task_prefix) for k in keys)]
        if not busy and not task_prefix:  # a call sent straight to its worker (trinom.worker_calls) is no task
            busy = [address for address, running in client.run(running_calls).items() if running]
        time.sleep(0.01)
    time.sleep(settle)
    os.kill(pids[busy[0]], signal.SIGKILL)
    thread.join(timeout=300)
    return out, pids[busy[0]]
