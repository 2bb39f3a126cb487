"""The command line on today's records: `--context`, `--state-mode`, `--fixture-preset`, a
batch's actions in a summary, and files read only in part reported as warnings."""

import json
from datetime import timedelta
from typing import Any

import pytest
from typer.testing import CliRunner

from server.cli import app
from tests.compat.mm_format import Act, Session, write_new, write_old
from tests.compat.scenarios import HOME, SEND, SEND_ACTS, batched_send_flow, send_flow
from tests.conftest import FIXED_NOW, Knowledge


@pytest.fixture(autouse=True)
def no_knowhow_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("KNOWHOW_ROOT", "KNOWHOW_INDEX", "KNOWHOW_SYNONYMS", "KNOWHOW_SESSION"):
        monkeypatch.delenv(name, raising=False)


def run(kb: Knowledge, *args: str) -> Any:
    where = ["--root", str(kb.root), "--index", str(kb.index_dir)]
    return CliRunner().invoke(app, [*args, *where])


def result_of(kb: Knowledge, *args: str) -> Any:
    done = run(kb, *args, "--json")
    assert done.exit_code == 0, done.output
    body = json.loads(done.stdout.splitlines()[-1])
    assert body["ok"] is True
    return body["result"]


def test_context_and_launch_filters(kb: Knowledge) -> None:
    prod = write_new(kb.root, send_flow("mm-prod-a", context="prod", hours_ago=5))
    write_new(kb.root, send_flow("mm-e2e-a", state_mode="custom", fixture_preset="withTokens"))
    write_old(kb.root, send_flow("mm-old-a", hours_ago=3))
    kb.index()
    found = result_of(kb, "search", "send amount", "--context", "prod")
    assert {row["stepId"] for row in found["results"]} <= set(prod)
    listed = result_of(kb, "sessions", "--state-mode", "custom")
    assert [s["sessionId"] for s in listed["sessions"]] == ["mm-e2e-a"]
    assert listed["sessions"][0]["fixturePreset"] == "withTokens"
    last = result_of(kb, "last", "--scope", "all", "--fixture-preset", "withTokens", "-n", "50")
    assert {s["sessionId"] for s in last["steps"]} == {"mm-e2e-a"}
    table = run(kb, "sessions")
    assert "custom (withTokens)" in table.stdout


def test_a_bad_context_is_refused_by_name(kb: Knowledge) -> None:
    write_new(kb.root, send_flow("mm-prod-a"))
    done = run(kb, "search", "send", "--context", "staging", "--json")
    assert done.exit_code == 2
    error = json.loads(done.stdout.splitlines()[-1])["error"]
    assert error["code"] == "MM_INVALID_INPUT" and "context" in error["message"]


def test_a_summary_lists_a_batch_s_actions(kb: Knowledge) -> None:
    write_new(kb.root, batched_send_flow("mm-send-b"))
    kb.index()
    shown = run(kb, "summarize", "mm-send-b")
    assert shown.exit_code == 0, shown.output
    assert "\t2\ttype\tsend\ttestId:send-amount-input\t0.1\t" in shown.stdout  # piped: columns
    failed = Session("mm-send-f", FIXED_NOW - timedelta(hours=2))
    failed.step(Act("describe_screen"), HOME)
    failed.batch(SEND_ACTS, SEND, ok=False, error=("MM_BATCH_FAILED", "x"), stop_on_error=True)
    write_new(kb.root, failed)
    shown = run(kb, "summarize", "mm-send-f")
    assert "✗\t\trun_steps\thome\t\t\tMM_BATCH_FAILED\t" in shown.stdout
    assert "worked up to an unknown step" in shown.stdout


def test_index_reports_files_read_in_part(kb: Knowledge) -> None:
    write_new(kb.root, send_flow("mm-send-a"))
    odd = kb.root / "mm-send-a" / "steps" / "click.json"
    step = next((kb.root / "mm-send-a" / "steps").glob("*-click.json"))
    odd.write_bytes(step.read_bytes())
    done = run(kb, "index")
    assert done.exit_code == 0, done.output
    assert f"warning {odd}: file name is neither" in done.stderr
    report = result_of(kb, "reindex")
    assert [w["path"] for w in report["warnings"]] == [str(odd)]
    assert report["skipped"] == []
