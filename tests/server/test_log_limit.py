"""No kind of log record floods the server's log: of each kind the first few a minute pass,
and the first one after says how many were left out."""

import logging

from server.transport.log_limit import BURST, WINDOW_SECONDS, RepeatLimit


def record(message: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, args, None)


def test_each_kind_passes_a_few_times_a_window_then_says_how_many_were_left_out() -> None:
    now = [0.0]
    limit = RepeatLimit(clock=lambda: now[0])
    accept = "socket.accept() out of system resource"
    passed = [r for r in (record(accept) for _ in range(1000)) if limit.filter(r)]
    assert len(passed) == BURST
    other = record("refused a connection from %s", "127.0.0.1")
    assert limit.filter(other), "another kind has a window of its own"

    now[0] += WINDOW_SECONDS
    after = record(accept)
    assert limit.filter(after)
    assert f"{1000 - BURST:,} more like this left out" in after.getMessage()
