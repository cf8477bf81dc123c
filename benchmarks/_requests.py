"""How the model-server benchmarks send a request set: one after another, or all at once (a thread each)."""

from __future__ import annotations

import threading
from typing import Callable


def send_all(count: int, send: Callable[[int], None], *, concurrent: bool) -> None:
    """``send(i)`` for ``i`` in ``range(count)``: in order, or each in its own thread, all started before any is
    waited for."""
    if not concurrent:
        for i in range(count):
            send(i)
        return
    threads = [threading.Thread(target=send, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
