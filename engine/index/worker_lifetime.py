"""A worker process ends when the process that started its pool ends, however that one ended.

The indexer's workers are forked from a fork server, not from the process that uses them, and
each holds its own end of the pool's task queue: when that process is killed (SIGKILL runs
none of its clean-up), nothing tells them, and they waited for tasks forever, each holding its
share of a build's memory (`scripts/adversary.py`, the `kill -9` attack). So every worker
watches its owner: through a pidfd where the OS has them (Linux), which becomes readable the
moment the owner ends; elsewhere by asking every `POLL_SECONDS` whether it still runs.
"""

import os
import select
import threading
import time

POLL_SECONDS = 1.0


def end_with(owner: int) -> None:
    """End this process (at once, without clean-up: a worker has nothing to flush) as soon as
    process `owner` ends. Returns at once; a daemon thread watches."""
    watch = _watch_pidfd if hasattr(os, "pidfd_open") else _watch_by_polling
    threading.Thread(target=watch, args=(owner,), name="knowhow-owner", daemon=True).start()


def _watch_pidfd(owner: int) -> None:
    try:
        handle = os.pidfd_open(owner)
    except ProcessLookupError:  # it ended before the watch began
        os._exit(1)
    select.select([handle], [], [])
    os._exit(1)


def _watch_by_polling(owner: int) -> None:
    while True:
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            os._exit(1)
        time.sleep(POLL_SECONDS)
