"""Calls straight to the Dask workers that hold placed data, past the scheduler (issue 27).

A Dask task takes a round trip through the scheduler each way, and each leg waits for a batched message stream
(the client sends to the scheduler every 10 ms, the scheduler to a worker every 5 ms, and back): 15-20 ms a call
on an idle 2-GPU host, a fifth of pricing a million options on one GPU. A placed book needs none of what the
scheduler adds (its data is on the worker already, the call names its worker), so :class:`WorkerCalls` sends each
call to its worker in one message of Dask's own connection pool (``client.rpc``), to one
:class:`PlacedRunner` per worker (a Dask actor), which runs it on the placed data in the worker's thread pool and
answers in the reply: about 1 ms each way.

Nothing is lost to a failing worker: a call whose worker cannot be reached, died, or no longer holds the data
comes back :data:`MISSING`, and the caller runs it as a Dask task (with Dask's retries, and the data placed again:
:meth:`trinom.distributed.DistributedBook._execute`). An error raised by the function itself is raised here.
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any


class _Missing:
    """The answer of a call that did not run on its worker (one object, in every process)."""

    def __reduce__(self) -> str:
        return "MISSING"

    def __repr__(self) -> str:
        return "MISSING"


#: What a call gives where it did not run (its worker is gone or no longer holds the data): run it as a task.
MISSING = _Missing()
#: Calls running in this process's runner.
_RUNNING = [0]
#: Per client, its calls (the runners live as long as the client).
_CALLS: weakref.WeakKeyDictionary[Any, WorkerCalls] = weakref.WeakKeyDictionary()


class PlacedRunner:
    """A Dask actor, one per worker: runs a function on data the worker holds, by key, in the worker's thread pool
    (calls on shards of one worker run side by side, as its tasks would)."""

    async def run(self, key: Any, function: Callable[..., Any], arguments: tuple[Any, ...]) -> Any:
        from distributed import get_worker

        worker = get_worker()
        try:
            data = worker.data[key]
        except KeyError:  # released, or never here: the caller runs it as a task
            return MISSING
        loop = asyncio.get_running_loop()
        _RUNNING[0] += 1
        try:
            return await loop.run_in_executor(worker.executors["default"], functools.partial(function, data, *arguments))
        finally:
            _RUNNING[0] -= 1


def running_calls(dask_worker: Any = None) -> int:
    """How many calls a :class:`PlacedRunner` is running in this process now (``client.run(running_calls)``)."""
    return _RUNNING[0]


class WorkerCalls:
    """Calls ``function(data, *arguments)`` on the workers holding the data (see the module), one
    :class:`PlacedRunner` per worker, made on first use."""

    def __init__(self, client: Any):
        self.client = client
        self.runners: dict[str, Any] = {}  #: worker address -> the future of its runner

    def runner(self, worker: str) -> str | None:
        """The key of ``worker``'s runner (made there now if it has none alive); None where it cannot be made."""
        future = self.runners.get(worker)
        if future is not None and future.status == "finished":
            return future.key
        try:
            future = self.client.submit(PlacedRunner, workers=[worker], allow_other_workers=False, actor=True,
                                        pure=False)
            future.result()
        except Exception:  # the worker is gone: its calls run as tasks
            self.runners.pop(worker, None)
            return None
        self.runners[worker] = future
        return future.key

    def run(self, calls: Sequence[tuple[str, Any, Callable[..., Any], tuple[Any, ...]]]) -> list[Any]:
        """Per call ``(worker, key, function, arguments)``: ``function(the worker's data under key, *arguments)``, all
        at once; :data:`MISSING` where the call did not run there. The first error raised by a function is raised
        once every call has ended."""
        from distributed.protocol import to_serialize

        runners = {worker: self.runner(worker) for worker in {call[0] for call in calls}}

        async def one(worker: str, key: Any, function: Callable[..., Any], arguments: tuple[Any, ...]) -> Any:
            runner = runners[worker]
            if runner is None:
                return MISSING
            try:
                reply = await self.client.rpc(worker).actor_execute(
                    actor=runner, function="run",
                    args=[to_serialize(key), to_serialize(function), to_serialize(arguments)], kwargs={})
            except (OSError, KeyError):  # the worker died or cannot be reached (Dask's CommClosedError is an OSError),
                # or no longer holds the runner (it restarted)
                self.runners.pop(worker, None)
                return MISSING
            if reply.get("status") == "OK":
                return reply["result"]
            error = reply.get("exception")
            raise error if isinstance(error, BaseException) else RuntimeError(f"worker {worker}: {error!r}")

        async def every() -> list[Any]:
            return await asyncio.gather(*(one(*call) for call in calls), return_exceptions=True)

        results = self.client.sync(every)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results


def for_client(client: Any) -> WorkerCalls:
    """The :class:`WorkerCalls` of ``client`` (one per client: its runners serve every book placed through it)."""
    calls = _CALLS.get(client)
    if calls is None:
        calls = _CALLS[client] = WorkerCalls(client)
    return calls


__all__ = ["MISSING", "PlacedRunner", "WorkerCalls", "for_client", "running_calls"]
