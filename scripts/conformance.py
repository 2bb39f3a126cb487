"""Run the official MCP conformance suite against `knowhow serve --transport http`.

The suite and the Node.js 22 it needs come from npm, pinned by
tests/server/conformance/package-lock.json (`make conformance` installs them with `npm ci`).
The server serves a copy of the bundled sample root with its own index, in a temporary folder,
on a free loopback port. Both the active and the pending suite run, with
tests/server/conformance/expected-failures.yaml: the run fails on a scenario that fails and is
not listed there, and on a listed one that passes.

    python scripts/conformance.py [--keep DIR]
"""

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUITE_DIR = REPO / "tests" / "server" / "conformance"
BIN = SUITE_DIR / "node_modules" / ".bin"
EXPECTED = SUITE_DIR / "expected-failures.yaml"
SAMPLE = REPO / "server" / "demo" / "sample_root"
START_SECONDS = 60.0
SUITES = ("active", "pending")
COUNTS = re.compile(r"\d+ passed, \d+ failed")
"""The suite's tallies count expected failures as failed; CI reads a line that is only such a
tally as the closing line of a test run, so each is said with what it counts."""


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(work: Path) -> tuple[subprocess.Popen[bytes], str]:
    """knowhow over HTTP on a copy of the sample root; returns once it answers."""
    root, index = work / "root", work / "index"
    shutil.copytree(SAMPLE, root)
    port = free_port()
    knowhow = Path(sys.executable).with_name("knowhow")
    command = [str(knowhow), "serve", "--transport", "http", "--port", str(port)]
    command += ["--root", str(root), "--index", str(index)]
    log = (work / "server.log").open("wb")
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, cwd=work)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"knowhow serve exited with {proc.returncode}; see {work / 'server.log'}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    sys.exit(f"knowhow serve did not listen within {START_SECONDS:.0f} s")


def run_suite(url: str, suite: str, out: Path) -> int:
    """One suite against `url`; the suite's own exit code (0: only expected failures)."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [str(BIN / "conformance"), "server", "--url", url, "--suite", suite]
    command += ["--expected-failures", str(EXPECTED), "--output-dir", str(out / suite)]
    say(f"$ conformance server --suite {suite} --expected-failures {EXPECTED.name}")
    run = subprocess.run(
        command, env=env, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    for line in run.stdout.decode("utf-8", "replace").splitlines():
        say(f"{line} (checks; expected failures included)" if COUNTS.search(line) else line)
    return run.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one)")
    args = parser.parse_args()
    if not (BIN / "conformance").exists() or not (BIN / "node").exists():
        sys.exit("the suite is not installed: `make conformance` installs it (npm ci)")
    with tempfile.TemporaryDirectory(prefix="knowhow-conformance-") as temporary:
        work = args.keep or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        proc, url = start_server(work)
        try:
            failed = [suite for suite in SUITES if run_suite(url, suite, work / "results")]
        finally:
            proc.terminate()
            proc.wait(10)
        say(f"conformance: {time.monotonic() - started:.1f} s, server log {work / 'server.log'}")
    if failed:
        say(f"conformance: unexpected results in the {' and '.join(failed)} suite")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
