"""
A single background thread that sends records (outcomes, run ends) off the agent's hot path.

Tasks run one at a time in the order they were submitted, so the records of one run reach the
server in order. Each submission returns a ``concurrent.futures.Future``: the hook waits for a
run's futures before it decides that run's next step (so provenance and idempotency see every
earlier result) and before the run ends.

:meth:`BackgroundSender.submit` uses ``queue.SimpleQueue.put``, which is safe to call from a
``weakref`` callback or ``__del__`` (it never blocks on a lock another frame of the same thread
may hold): that is how a run whose ``State`` was dropped still gets its end recorded.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

logger = logging.getLogger(__name__)

_STOP = object()


class BackgroundSender:
    """
    One daemon thread running submitted callables in order.

    :param name: The thread's name (for debugging).
    """

    def __init__(self, name: str = "callgate-sender") -> None:
        self._name = name
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def _ensure_thread(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()

    def submit(self, task: Callable[[], Any]) -> Future[Any]:
        """
        Queues ``task``; returns a future of its result (or its exception).

        Safe from weakref callbacks: it neither blocks nor takes a lock the caller may hold, except
        on the very first submission, which starts the thread.
        """
        future: Future[Any] = Future()
        self._queue.put((task, future))
        if self._thread is None or not self._thread.is_alive():
            self._ensure_thread()
        return future

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            task, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(task())
            except BaseException as error:
                future.set_exception(error)

    def stop(self, timeout: float = 5.0) -> None:
        """Lets queued tasks finish (up to ``timeout`` seconds), then stops the thread."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        self._queue.put(_STOP)
        thread.join(timeout)
        self._thread = None
