"""What a new user pastes into an MCP client works wherever the client starts it.

`knowhow mcp-config` prints, for the common clients, a config with absolute paths; an SDK client
started from an unrelated folder with exactly that config finds the sample. `knowhow serve`
resolves relative `--root`/`--index` once at start-up (a relative index once crashed
`mm_knowledge_status`), and refuses a root that does not exist instead of creating an empty one
wherever the client happens to run it; `--create-root` is the explicit wish.
"""

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from server.cli.endpoint import ENDPOINT_FILE
from tests.server.first_hour import (
    KNOWHOW,
    SAMPLE_RELATIVE_INDEX,
    SAMPLE_RELATIVE_ROOT,
    envelope,
    knowhow,
    knowhow_json,
    made_run,
    spawned,
    user_env,
)
from tests.server.mcp_helpers import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode")


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_run(tmp_path_factory.mktemp("clone"))


def mcp_config(clone: Path) -> dict[str, Any]:
    printed = knowhow_json(clone, "mcp-config")
    assert printed["ok"] is True, printed
    result: dict[str, Any] = printed["result"]
    return result


def server_entry(client: str, config: dict[str, Any]) -> dict[str, Any]:
    """The knowhow entry of one client's config file."""
    servers = config["servers"] if client == "vscode" else config["mcpServers"]
    assert list(servers) == ["knowhow"]
    entry: dict[str, Any] = servers["knowhow"]
    return entry


def test_mcp_config_prints_absolute_paths_for_every_common_client(clone: Path) -> None:
    config = mcp_config(clone)
    root, index = clone / SAMPLE_RELATIVE_ROOT, clone / SAMPLE_RELATIVE_INDEX
    assert sorted(config["clients"]) == sorted(CLIENTS)
    for client in CLIENTS:
        entry = server_entry(client, config["clients"][client]["config"])
        command = Path(entry["command"])
        assert command.is_absolute() and command.exists(), entry
        args = entry["args"]
        assert args[0] == "serve"
        assert args[args.index("--root") + 1] == str(root.resolve())
        assert args[args.index("--index") + 1] == str(index.resolve())
        assert config["clients"][client]["file"]  # where to paste it
    assert config["clients"]["vscode"]["config"]["servers"]["knowhow"]["type"] == "stdio"
    add = config["clients"]["claude-code"]["command"]
    assert add.startswith("claude mcp add knowhow -- ") and str(root.resolve()) in add


def test_mcp_config_human_output_holds_each_client_and_the_claude_command(clone: Path) -> None:
    done = knowhow(clone, "mcp-config")
    assert done.returncode == 0, done.stderr
    for client in ("Claude Code", "Claude Desktop", "Cursor", "VS Code"):
        assert client in done.stdout
    assert "claude mcp add knowhow -- " in done.stdout
    # every JSON block printed is a whole config, ready to paste
    blocks = re.findall(r"^\{$.*?^\}$", done.stdout, flags=re.S | re.M)
    assert len(blocks) >= 3 and all(json.loads(block) for block in blocks)


async def test_the_printed_config_works_from_any_folder(clone: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    entry = server_entry("claude-code", mcp_config(clone)["clients"]["claude-code"]["config"])
    async with spawned(entry["command"], entry["args"], elsewhere, tmp_path / "log") as client:
        found = await envelope(client, "mm_knowledge_search", {"query": "send"})
        assert found["result"]["total"] > 0
        status = await envelope(client, "mm_knowledge_status", {})
        assert status["ok"] is True, status
    assert list(elsewhere.iterdir()) == []  # nothing created where the client runs


def test_serve_refuses_a_root_that_does_not_exist(tmp_path: Path) -> None:
    done = knowhow(tmp_path, "serve", "--root", "missing", "--index", "index", timeout=60)
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert "MM_NOT_FOUND" in said and str(tmp_path / "missing") in said
    assert "--create-root" in said
    assert list(tmp_path.iterdir()) == []


async def test_serve_creates_the_root_when_asked(tmp_path: Path) -> None:
    args = ["serve", "--root", str(tmp_path / "new"), "--index", str(tmp_path / "ix")]
    async with spawned(str(KNOWHOW), [*args, "--create-root"], tmp_path, tmp_path / "log") as c:
        status = await envelope(c, "mm_knowledge_status", {})
        assert status["ok"] is True and status["result"]["sessionsOnDisk"] == 0
    assert (tmp_path / "new").is_dir()


def test_make_run_ends_with_a_config_to_paste(clone: Path) -> None:
    """`knowhow demo --serve` (what `make run` runs) prints the Claude Code config and command
    with absolute paths before it serves, and the web page's address; while it serves, the
    `knowhow` commands of its root find it (its endpoint file in the index folder)."""
    port, app_port = free_port(), free_port()
    args = ["demo", "--serve", "--port", str(port), "--app-port", str(app_port)]
    with subprocess.Popen(
        [str(KNOWHOW), *args],
        cwd=clone,
        env=user_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "Ctrl-C" in line:
                break
        endpoint = clone / "index-data" / ENDPOINT_FILE
        deadline = time.monotonic() + 120
        while not endpoint.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        announced = endpoint.exists()
        proc.terminate()
    assert announced, "demo --serve wrote no endpoint file for the command line"
    printed = "".join(lines)
    assert f"http://127.0.0.1:{port}/ui/" in printed
    assert "claude mcp add knowhow -- /" in printed
    assert str((clone / SAMPLE_RELATIVE_ROOT).resolve()) in printed
    assert "mcp-config" in printed  # where the other clients' configs are
