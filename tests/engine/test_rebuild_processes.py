"""Rebuilds in real `knowhow reindex` processes: two at once leave a whole index (a second
waits for the first), and a rebuild killed with SIGKILL leaves no worker process running.
"""

import contextlib
import os
import signal
import subprocess

import pytest
from adversary import in_session  # scripts/ is on pytest's pythonpath

from explorer import knowhow_command
from tests.conftest import Knowledge
from tests.engine.test_live import wait_for

pytestmark = pytest.mark.slow

TOGETHER_ROUNDS = 3
WORKER_SESSIONS = 80
"""Enough sessions for a rebuild to analyse them in worker processes."""


def many_sessions(kb: Knowledge, sessions: int, steps: int) -> None:
    for n in range(sessions):
        session_id = kb.session(f"mm-bulk{n:04d}", flow_tags=["send"])
        for k in range(steps):
            kb.step(session_id, test_id=f"coin-overview-send-{k}", screen="home")


def reindex(
    kb: Knowledge, output: int = subprocess.PIPE, *, new_session: bool = False
) -> subprocess.Popen[str]:
    where = ["--root", str(kb.root), "--index", str(kb.index_dir)]
    return subprocess.Popen(
        [*knowhow_command(), "reindex", "--json", *where],
        stdout=output,
        stderr=output,
        text=True,
        start_new_session=new_session,
    )


def test_two_rebuilds_at_once_leave_a_whole_index(kb: Knowledge) -> None:
    many_sessions(kb, 12, 10)
    engine = kb.engine()  # builds the first generation; serves it through every round
    for _ in range(TOGETHER_ROUNDS):
        first, second = reindex(kb), reindex(kb)
        for proc in (first, second):
            stdout, stderr = proc.communicate(timeout=300)
            assert proc.returncode == 0, stdout + stderr
            assert '"ok":true' in stdout
        current = (kb.index_dir / "CURRENT").read_text().strip()
        assert (kb.index_dir / current).is_dir(), f"CURRENT names {current}, which is gone"
        engine.refresh()
        assert engine.document_counts()["steps"] == 120


def test_a_killed_rebuild_leaves_no_worker_running(kb: Knowledge) -> None:
    """The rebuild runs in a session of its own, so that every process it started can be
    found (and, should the test fail, ended) after it was killed."""
    many_sessions(kb, WORKER_SESSIONS, 20)
    proc = reindex(kb, subprocess.DEVNULL, new_session=True)
    try:
        # a fork server, a resource tracker and a worker
        wait_for(lambda: len(in_session(proc.pid)) >= 4, timeout=60.0)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        wait_for(lambda: not in_session(proc.pid), timeout=60.0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
