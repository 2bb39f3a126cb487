"""The `knowhow` script answered by a running HTTP server of the same root and index: the same
output and exit status as in-process, found only through an endpoint file it can believe, and
one line on stderr (then the answer in-process) for every endpoint it cannot: another root, a
dead pid, a port held by something else, a server that never answers. Real `knowhow serve`
processes and real `knowhow` processes, on the bundled sample."""

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from engine import KnowledgeStore, ensure_index
from explorer import knowhow_command
from server.cli import client
from server.cli.endpoint import Endpoint, endpoint_path, new_secret, read_endpoint, write_endpoint
from server.demo import SAMPLE_ROOT
from tests.server.mcp_helpers import REPO, start_http, stop

SESSION = "mm-mk7503cd-qnpu07"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("served")
    root = shutil.copytree(SAMPLE_ROOT, base / "root")
    ensure_index(KnowledgeStore(root), base / "index")
    return root, base / "index"


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name in ("KNOWHOW_ROOT", "KNOWHOW_INDEX", "KNOWHOW_SYNONYMS", "KNOWHOW_SESSION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv(client.IN_PROCESS_ENV, raising=False)
    return dict(os.environ)


def knowhow(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*knowhow_command(), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )


def in_process(*args: str) -> subprocess.CompletedProcess[str]:
    return knowhow(*args, env=dict(os.environ) | {client.IN_PROCESS_ENV: "1"})


@pytest.fixture
def server(
    sample: tuple[Path, Path], tmp_path: Path, environment: dict[str, str]
) -> Iterator[subprocess.Popen[bytes]]:
    root, index = sample
    proc, _ = start_http(root, index, tmp_path / "server.log")
    deadline = time.monotonic() + 60
    while read_endpoint(str(index)) is None:  # written once the index is open
        assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()
        time.sleep(0.05)
    yield proc
    stop(proc)


def options(sample: tuple[Path, Path]) -> tuple[str, ...]:
    return ("--root", str(sample[0]), "--index", str(sample[1]))


QUERIES = [
    ("search", "send button", "-k", "5", "--json"),
    ("search", "send button", "-k", "5"),
    ("search", "swap", "-k", "abc", "--json"),
    ("last", "-n", "3", "--scope", SESSION, "--json"),
    ("sessions", "--json"),
    ("summarize", SESSION),
    ("timeline", f"{SESSION}/0021-mm_click", "-B", "2", "-A", "2"),
    ("search", "x", "--scope", "mm-no-such-session", "--json"),
]


@pytest.mark.slow
def test_a_running_server_answers_the_script_as_the_script_answers_itself(
    server: subprocess.Popen[bytes], sample: tuple[Path, Path], environment: dict[str, str]
) -> None:
    where = options(sample)
    for query in QUERIES:
        served = client.ask([*query, *where], environment)
        assert served is not None, query  # the server answered, not this process
        alone = in_process(*query, *where)
        assert (served["exit"], served["stdout"]) == (alone.returncode, alone.stdout), query
        through_script = knowhow(*query, *where, env=environment)
        assert through_script.stdout == alone.stdout
        assert through_script.returncode == alone.returncode
        assert "answering in this process" not in through_script.stderr
    status = orjson.loads(knowhow("status", "--json", *where, env=environment).stdout)
    assert status["ok"] and status["result"]["writerPid"] == server.pid


@pytest.mark.slow
def test_a_server_gone_costs_one_line_and_the_answer_comes_from_this_process(
    server: subprocess.Popen[bytes], sample: tuple[Path, Path], environment: dict[str, str]
) -> None:
    where, index = options(sample), sample[1]
    server.send_signal(signal.SIGKILL)  # no chance to remove its endpoint file
    server.wait(10)
    assert read_endpoint(str(index)) is not None
    done = knowhow("search", "send button", "--json", *where, env=environment)
    assert done.returncode == 0 and orjson.loads(done.stdout)["ok"]
    assert done.stderr.count("\n") == 1 and "has stopped; answering in this process" in done.stderr


@pytest.mark.slow
def test_a_stopped_server_removes_its_endpoint_file(
    server: subprocess.Popen[bytes], sample: tuple[Path, Path]
) -> None:
    stop(server)
    assert read_endpoint(str(sample[1])) is None


class Listener:
    """Something else on a loopback port: it records what it is sent and answers `reply`
    (or nothing at all, holding the connection open)."""

    def __init__(self, reply: bytes | None) -> None:
        self.reply = reply
        self.received = bytearray()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(5)
            try:
                self.received += conn.recv(1 << 16)
                if self.reply is None:
                    time.sleep(5)
                else:
                    conn.sendall(self.reply)
            except OSError:
                pass
            finally:
                conn.close()

    def close(self) -> None:
        self.sock.close()


def forge(sample: tuple[Path, Path], port: int, changes: dict[str, Any]) -> None:
    """An endpoint file in the sample's index, as a live process of this root would write it,
    with `changes`."""
    root, index = sample
    endpoint = Endpoint(
        os.getpid(), "127.0.0.1", port, str(root), str(index), None, new_secret(), "now"
    )
    write_endpoint(endpoint._replace(**changes), str(index))


@pytest.mark.parametrize(
    ("reply", "changes", "said"),
    [
        (b"HTTP/1.1 200 OK\r\n\r\n{}", {"root": "/somewhere/else"}, "serves /somewhere/else"),
        (b"HTTP/1.1 200 OK\r\n\r\n{}", {"pid": 2**22 + 17}, "has stopped"),
        (b"HTTP/1.1 200 OK\r\n\r\n{}", {"host": "10.1.2.3"}, "not on loopback"),
        (b'HTTP/1.1 200 OK\r\n\r\n{"proof": "0"}', {}, "is not the server that wrote it"),
        (b"SSH-2.0-OpenSSH_9.2\r\n", {}, "does not speak HTTP"),
        (None, {}, "did not answer within"),
    ],
    ids=["another-root", "dead-pid", "not-loopback", "wrong-proof", "not-http", "hangs"],
)
def test_an_endpoint_that_cannot_be_believed_never_sees_the_query(
    sample: tuple[Path, Path],
    environment: dict[str, str],
    reply: bytes | None,
    changes: dict[str, Any],
    said: str,
) -> None:
    root, index = sample
    listener = Listener(reply)
    try:
        forge(sample, listener.port, changes)
        argv = [
            "search",
            "secret-query-words",
            "--json",
            "--root",
            str(root),
            "--index",
            str(index),
        ]
        with pytest.raises(client.NotServed, match=said):
            client.ask(argv, environment)
        assert b"secret-query-words" not in listener.received
    finally:
        listener.close()
        Path(endpoint_path(str(index))).unlink(missing_ok=True)


def test_a_forged_endpoint_file_costs_one_line_and_an_answer_from_this_process(
    sample: tuple[Path, Path], environment: dict[str, str]
) -> None:
    root, index = sample
    forge(sample, 9, {"root": "/somewhere/else"})
    try:
        done = knowhow(
            "search",
            "send button",
            "--json",
            "--root",
            str(root),
            "--index",
            str(index),
            env=environment,
        )
    finally:
        Path(endpoint_path(str(index))).unlink()
    assert done.returncode == 0 and orjson.loads(done.stdout)["result"]["total"] > 0
    assert done.stderr.strip().startswith("knowhow: the running server")
    assert done.stderr.count("\n") == 1


def test_a_usage_error_is_the_envelope_with_json_and_one_line_without(
    environment: dict[str, str],
) -> None:
    as_json = knowhow("search", "swap", "-k", "abc", "--json", env=environment)
    assert as_json.returncode == 2
    error = orjson.loads(as_json.stdout)["error"]
    assert error["code"] == "MM_INVALID_INPUT" and "'--limit'" in error["message"]
    plain = knowhow("search", "swap", "-k", "abc", env=environment)
    assert plain.returncode == 2 and plain.stdout == ""
    assert plain.stderr.count("\n") == 1 and plain.stderr.startswith(
        "MM_INVALID_INPUT: knowhow search"
    )
    unknown = knowhow("serch", "swap", env=environment)
    assert unknown.returncode == 2 and "No such command 'serch'" in unknown.stderr


@pytest.mark.slow
def test_two_daemon_starts_at_once_leave_one_server_which_stop_ends(
    sample: tuple[Path, Path], environment: dict[str, str]
) -> None:
    root, index = sample
    where = ("--root", str(root), "--index", str(index), "--json")
    starts = [
        subprocess.Popen(
            [*knowhow_command(), "daemon", "start", *where],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env=environment,
        )
        for _ in range(2)
    ]
    answers = [orjson.loads(start.communicate(timeout=200)[0])["result"] for start in starts]
    try:
        assert answers[0]["pid"] == answers[1]["pid"]
        assert sorted(answer["startedNow"] for answer in answers) == [False, True]
        served = client.ask(
            ["search", "send button", "--root", str(root), "--index", str(index)], environment
        )
        assert served is not None and served["exit"] == 0
    finally:
        stopped = orjson.loads(knowhow("daemon", "stop", *where, env=environment).stdout)
    assert stopped["result"]["stoppedNow"] and not client.alive(answers[0]["pid"])
    assert read_endpoint(str(index)) is None
    status = orjson.loads(knowhow("daemon", "status", *where, env=environment).stdout)
    assert status["result"]["running"] is False
