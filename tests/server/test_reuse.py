"""Acceptance: knowledge saves calls on an app nobody here wrote.

On MetaMask's own test dapp (real headless Chromium, real stdio `knowhow serve`), agent A — the
deterministic explorer, reading no knowledge — signs a personal message: it has to find out
that the dapp must be connected first. Agent B — a new server process, the same explorer now
reading A's knowledge — completes the same task with fewer calls, without exploring, and does
not repeat A's detours. A task that cannot be completed within its call budget is reported as
not completed, with every call of the budget spent and none more.
"""

from pathlib import Path

import orjson
import pytest

from explorer import Task, load_tasks, run_tasks
from server.demo import demo_app, metamask_test_dapp, metamask_test_dapp_installed
from tests.server.browser_helpers import DEMO_RULES, needs_chromium
from tests.server.mcp_helpers import REPO

pytestmark = [pytest.mark.browser, pytest.mark.anyio, needs_chromium]

DAPP_TASKS = REPO / "scripts" / "reuse" / "test-dapp.json"
DAPP_RULES = ("--screen-rules", str(REPO / "engine" / "rules" / "test-dapp.json"))
needs_test_dapp = pytest.mark.skipif(
    not metamask_test_dapp_installed(),
    reason="@metamask/test-dapp not installed: `make test-dapp` needs the npm registry",
)


def clicks_of(root: Path, agent: str) -> list[tuple[str, str]]:
    """(role, name) of every click the agent's session made, in order."""
    for session in root.iterdir():
        meta = orjson.loads((session / "session.json").read_bytes())
        if f"agent-{agent}" in meta["tags"]:
            steps = [orjson.loads(p.read_bytes()) for p in sorted((session / "steps").iterdir())]
            return [
                (s["tool"]["target"]["a11yHint"]["role"], s["tool"]["target"]["a11yHint"]["name"])
                for s in steps
                if s["tool"]["name"] == "mm_click"
            ]
    raise AssertionError(f"no session of agent {agent} in {root}")


@needs_test_dapp
async def test_b_signs_on_the_test_dapp_with_fewer_calls_than_a(tmp_path: Path) -> None:
    task = [t for t in load_tasks(DAPP_TASKS) if t.name == "personal-sign"]
    root = tmp_path / "llm-knowledge"
    where = {"root": root, "index": tmp_path / "index", "errlog": tmp_path / "server.log"}
    with metamask_test_dapp() as url:
        (a,) = await run_tasks(task, url, serve_args=DAPP_RULES, memory=False, agent="A", **where)
        (b,) = await run_tasks(task, url, serve_args=DAPP_RULES, memory=True, agent="B", **where)

    assert a.completed and a.explored, a
    assert b.completed and not b.explored, b
    assert b.calls < a.calls, (a.calls, b.calls)
    assert b.shown > 0 and b.precise > 0, b  # B read suggestions on its describe

    clicks_a, clicks_b = clicks_of(root, "A"), clicks_of(root, "B")
    assert ("button", "Connect") in clicks_a and clicks_a[-1] == ("button", "Sign")
    assert clicks_b == [("button", "Connect"), ("button", "Sign")], clicks_b
    assert len(clicks_b) < len(clicks_a)  # A's detours are not repeated


async def test_a_task_past_its_budget_is_not_completed(tmp_path: Path) -> None:
    task = Task(
        name="never",
        start="#/unlock",
        goal="Find the page that does not exist",
        inputs={"Password": "correct horse battery staple"},
        submit="Teleport",
        doneText="this text is never shown",
        budget=6,
    )
    where = {"root": tmp_path / "root", "index": tmp_path / "index", "errlog": tmp_path / "log"}
    with demo_app() as url:
        (report,) = await run_tasks(
            [task],
            url,
            serve_args=("--screen-rules", str(DEMO_RULES)),
            memory=True,
            agent="A",
            **where,
        )
    assert not report.completed
    assert report.reason.startswith("budget"), report
    assert report.calls == 6
