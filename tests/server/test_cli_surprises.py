"""What a new user met: no silent surprises, readable output, help and README that agree.
Through typer's CliRunner (output is not a terminal, as when piped) and an in-process MCP
client, on a real root and index."""

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from typer.testing import CliRunner

from engine import WriterLease
from server.app import create_server
from server.cli import app
from server.settings import ServerSettings
from tests.conftest import Knowledge
from tests.server.mcp_helpers import call

LONG = "mm-a-rather-long-session-id-for-wrapping-0123456789"


@pytest.fixture(autouse=True)
def no_knowhow_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("KNOWHOW_ROOT", "KNOWHOW_INDEX", "KNOWHOW_SYNONYMS", "KNOWHOW_SESSION"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def cli(kb: Knowledge) -> Any:
    kb.session(LONG, goal="Send 0.1 ETH", flow_tags=["send"], branch="feature/send")
    kb.step(LONG, "mm_describe_screen", screen="home", test_ids=["coin-overview-send"])
    kb.step(LONG, selector='[data-testid="eth-overview-send"]', screen="send")
    kb.step(LONG, test_id="send-continue", ok=False, screen="send", error=("TIMEOUT", "slow"))
    kb.step(LONG, test_id="send-continue", screen="confirm")
    runner = CliRunner()

    def run(*args: str, where: tuple[str, ...] | None = None) -> Any:
        place = where or ("--root", str(kb.root), "--index", str(kb.index_dir))
        return runner.invoke(app, [*args, *place])

    run.kb = kb  # type: ignore[attr-defined]
    return run


def envelope(result: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(result.stdout)
    return body


# -- item 5: silent surprises -----------------------------------------------------------------


def test_index_of_a_root_that_does_not_exist_names_it(cli: Any, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir"
    result = cli("index", "--json", where=("--root", str(missing), "--index", str(tmp_path / "i")))
    assert result.exit_code == 2
    error = envelope(result)["error"]
    assert error["code"] == "MM_NOT_FOUND" and str(missing) in error["message"]
    assert not (tmp_path / "i").exists()
    human = cli("reindex", where=("--root", str(missing), "--index", str(tmp_path / "i")))
    assert human.exit_code == 2 and str(missing) in human.output


@pytest.mark.parametrize("command", [["search", "send"], ["last"]])
def test_a_scope_naming_no_session_says_so(cli: Any, command: list[str]) -> None:
    cli("index")
    result = cli(*command, "--scope", "mm-doesnotexist-xx", "--json")
    assert result.exit_code == 0
    body = envelope(result)["result"]
    assert body["total"] == 0
    assert "No session 'mm-doesnotexist-xx'" in body["hint"]
    human = cli(*command, "--scope", "mm-doesnotexist-xx")
    assert "No session 'mm-doesnotexist-xx'" in human.stdout


def test_an_existing_session_gets_no_such_note(cli: Any) -> None:
    cli("index")
    body = envelope(cli("last", "--scope", LONG, "--failed", "--tool", "mm_type", "--json"))
    assert body["result"]["total"] == 0 and body["result"].get("hint") is None


@pytest.mark.parametrize("query", ["", "   ", "\t \n"])
def test_a_blank_query_is_invalid_input(cli: Any, query: str) -> None:
    cli("index")
    result = cli("search", query, "--json")
    assert result.exit_code == 2
    error = envelope(result)["error"]
    assert error["code"] == "MM_INVALID_INPUT" and error["message"].startswith("query: ")


def test_index_while_a_server_is_the_writer_says_it_keeps_the_index_current(cli: Any) -> None:
    assert cli("index").exit_code == 0
    lease = WriterLease(cli.kb.index_dir)
    assert lease.try_acquire()  # what a running `knowhow serve` holds
    try:
        result = cli("index")
        assert result.exit_code == 0, result.output
        assert "keeps it current" in result.stdout
        body = envelope(cli("index", "--json"))
        assert body["ok"] is True and body["result"]["indexedBy"] == "writer"
    finally:
        lease.release()
    assert "indexed" in cli("index").stdout  # without a server it indexes itself


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    settings = ServerSettings(root=tmp_path / "root", index=tmp_path / "index")
    async with Client(create_server(settings)) as connected:
        yield connected


@pytest.mark.anyio
async def test_recording_into_an_unknown_session_is_refused(client: Client, tmp_path: Path) -> None:
    step = {"tool": {"name": "mm_click"}, "outcome": {"ok": True}, "sessionId": "mm-typo-1234"}
    result = await call(client, "mm_knowledge_record_step", step)
    assert result["ok"] is False
    assert result["error"]["code"] == "MM_NOT_FOUND"
    assert "mm-typo-1234" in result["error"]["message"]
    assert "mm_knowledge_start_session" in result["error"]["message"]
    assert not (tmp_path / "root" / "mm-typo-1234").exists()


# -- item 7: readable output ------------------------------------------------------------------


def test_piped_tables_keep_every_step_id_whole(cli: Any) -> None:
    cli("index")
    for command in (["search", "send"], ["last", "--scope", LONG]):
        result = cli(*command)
        assert result.exit_code == 0
        for n in range(1, 5):
            assert f"{LONG}/000{n}-" in result.stdout


def header(text: str) -> str:
    """The column names (piped output: the tab-separated line after the `# title`)."""
    return next(line for line in text.splitlines() if "session" in line and "\t" in line)


def test_last_has_no_score_column_and_search_has_one(cli: Any) -> None:
    cli("index")
    assert "score" not in header(cli("last", "--scope", LONG).stdout)
    assert "score" in header(cli("search", "send").stdout)


def test_a_snippet_does_not_repeat_what_the_match_shows(cli: Any) -> None:
    cli("index")
    results = envelope(cli("search", "send-continue", "--json"))["result"]["results"]
    acted = [r for r in results if (r.get("target") or {}).get("testId") == "send-continue"]
    assert len(acted) == 2
    for result in acted:
        assert result["snippet"].count("send-continue") == 1


def test_the_row_screen_agrees_with_the_match(cli: Any) -> None:
    cli("index")
    [row] = [
        r
        for r in envelope(cli("search", "eth-overview-send", "--json"))["result"]["results"]
        if r["stepId"].endswith("0002-mm_click")
    ]
    # acted on home (the screen before), ended on send: the row names both
    assert (row["onScreen"], row["screen"]) == ("home", "send")
    assert "home → send" in cli("search", "eth-overview-send").stdout


def test_summarize_prints_selectors_and_brackets_as_they_are(cli: Any) -> None:
    cli("index")
    text = cli("summarize", LONG).stdout
    assert 'selector:[data-testid="eth-overview-send"]' in text


def on_a_taken_port(cli: Any, tmp_path: Path, *command: str) -> tuple[int, Any]:
    """Run `command --port P` on a fresh root while P is taken by a listening socket."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        where = ("--root", str(tmp_path / "fresh"), "--index", str(tmp_path / "fresh-index"))
        return port, cli(*command, "--port", str(port), where=where)


def test_serve_reports_a_taken_port_before_starting(cli: Any, tmp_path: Path) -> None:
    """As a bad setting is: one line naming the option, its variable, the port and what to do
    (it was the generic `MM_KNOWLEDGE_ERROR`)."""
    port, result = on_a_taken_port(cli, tmp_path, "serve", "--transport", "http")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"cannot serve: MM_INVALID_INPUT: --port (KNOWHOW_PORT): port {port} on 127.0.0.1 is "
        "in use (Address already in use): stop what listens there"
    ), result.stderr
    assert "another port" in result.stderr and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "fresh-index").exists(), "nothing started"


def test_demo_reports_a_taken_port_before_any_banner(cli: Any, tmp_path: Path) -> None:
    port, result = on_a_taken_port(cli, tmp_path, "demo", "--serve")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"MM_INVALID_INPUT: --port: port {port} on 127.0.0.1 is in use")
    assert "MCP server" not in result.output
    assert not (tmp_path / "fresh").exists()  # nothing copied or indexed either


# -- item 8: help and README agree --------------------------------------------------------------


def test_last_takes_the_same_filters_as_search(cli: Any) -> None:
    for option in ("--flow-tag", "--tag", "--screen", "--since-hours", "--git-branch", "--ok"):
        assert option in cli("last", "--help").stdout
    for option in ("--tool", "--after", "--before"):
        assert option in cli("last", "--help").stdout
    cli("index")
    steps = envelope(cli("last", "--scope", LONG, "--json"))["result"]["steps"]
    third = steps[2]["timestamp"]
    later = envelope(cli("last", "--scope", LONG, "--after", third, "--json"))["result"]["steps"]
    assert [s["stepId"] for s in later] == [s["stepId"] for s in steps[2:]]
    earlier = envelope(cli("last", "--scope", LONG, "--before", third, "--json"))["result"]
    assert [s["stepId"] for s in earlier["steps"]] == [s["stepId"] for s in steps[:2]]


def test_sessions_show_the_git_column(cli: Any) -> None:
    cli("index")
    text = cli("sessions").stdout
    assert "git" in header(text)
    assert "feature/send@" in text


def test_summarize_scope_does_not_offer_all(cli: Any) -> None:
    text = cli("summarize", "--help").stdout
    assert "'current' or a session id" in text and "'all'" not in text


def test_not_found_in_the_cli_names_no_mcp_tool(cli: Any) -> None:
    cli("index")
    result = cli("summarize", "mm-nothing-here")
    assert result.exit_code == 2 and "MM_NOT_FOUND" in result.output
    assert "mm_knowledge" not in result.output and "knowledge_" not in result.output


def test_help_names_the_environment_of_root_and_index() -> None:
    """Every command that takes --root and --index says which environment variable sets each
    (help text in brackets was read as markup and vanished)."""
    runner = CliRunner()
    for command in app.registered_commands:
        name = command.name or command.callback.__name__  # type: ignore[union-attr]
        text = " ".join(runner.invoke(app, [name, "--help"], env={"COLUMNS": "250"}).stdout.split())
        if "--root" in text:
            assert "env KNOWHOW_ROOT" in text and "env KNOWHOW_INDEX" in text, name


@pytest.mark.parametrize(
    ("args", "env", "field"),
    [
        (["--transport", "http", "--port", "99999"], {}, "--port (KNOWHOW_PORT)"),
        (["--transport", "tcp"], {}, "--transport (KNOWHOW_TRANSPORT)"),
        ([], {"KNOWHOW_PORT": "eighty"}, "--port (KNOWHOW_PORT)"),
        (["--tool-prefix", "mm-"], {}, "--tool-prefix (KNOWHOW_TOOL_PREFIX)"),
        ([], {"KNOWHOW_HTTP_MAX_SESSIONS": "0"}, "KNOWHOW_HTTP_MAX_SESSIONS"),
    ],
)
def test_serve_refuses_a_bad_setting_in_one_line(
    cli: Any, monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str], field: str
) -> None:
    """A bad setting printed pydantic's report (four lines and a URL) instead of knowhow's."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = cli("serve", *args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"cannot serve: MM_INVALID_INPUT: {field}: "), result.stderr
    assert len(result.stderr.splitlines()) == 1 and "pydantic" not in result.stderr
