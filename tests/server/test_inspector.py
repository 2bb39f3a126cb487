"""The official MCP Inspector (`--cli`, pinned in tests/server/inspector/package.json) calls every
tool with every kind of argument: strings, integers, booleans, enums, date-times, arrays, objects,
`filters`, and `scope` as a string and as an object.

The Inspector converts a `key=value` argument by the property's own schema; it does not follow
`$ref`, so this is what a third-party client sees. `make inspector` installs it (CI does); the
test installs it itself when npm is there, and skips, saying why, only when npm is not.
"""

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_live import wait_for
from tests.server.mcp_helpers import REPO, start_http, stop

pytestmark = pytest.mark.slow
INSPECTOR_DIR = REPO / "tests" / "server" / "inspector"
INSPECTOR = INSPECTOR_DIR / "node_modules" / ".bin" / "mcp-inspector"
SESSION = "mm-inspector-1"
STEP_ID = f"{SESSION}/0001-mm_click"


def ensure_inspector() -> Path:
    """The pinned Inspector, installed from the lockfile on first use (as `make inspector` does)."""
    if INSPECTOR.exists():
        return INSPECTOR
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not on PATH: the MCP Inspector contract test needs Node.js and npm")
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=INSPECTOR_DIR,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0 or not INSPECTOR.exists():
        pytest.skip(
            f"npm could not install the MCP Inspector (registry unreachable?): "
            f"{done.stderr.strip()[-500:]}"
        )
    return INSPECTOR


class Inspector:
    """The Inspector CLI pointed at one running knowhow server."""

    def __init__(self, url: str, home: Path) -> None:
        self.url, self.home = url, home

    def call(self, tool: str, /, **args: Any) -> dict[str, Any]:
        """`tools/call` with the arguments typed as a user types them; the envelope it got back."""
        pairs = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in args.items()]
        command = [str(INSPECTOR), "--cli", self.url, "--method", "tools/call", "--tool-name", tool]
        if pairs:
            command += ["--tool-arg", *pairs]
        env = {**os.environ, "HOME": str(self.home)}  # the Inspector keeps its catalog in ~
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
        answer, _ = json.JSONDecoder().raw_decode(done.stdout.strip() or "{}")
        assert "structuredContent" in answer, (done.stdout, done.stderr)
        return dict(answer["structuredContent"])

    def ok(self, tool: str, /, **args: Any) -> dict[str, Any]:
        envelope = self.call(tool, **args)
        assert envelope["ok"] is True, envelope
        return dict(envelope["result"])


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspector]:
    ensure_inspector()
    base = tmp_path_factory.mktemp("inspector")
    root, index, log, home = base / "root", base / "index", base / "server.log", base / "home"
    root.mkdir()
    home.mkdir()
    proc, port = start_http(root, index, log)
    try:
        yield Inspector(f"http://127.0.0.1:{port}/mcp", home)
    finally:
        stop(proc)


FILTERS = {
    "flowTag": "send",
    "tag": "smoke",
    "screen": "home",
    "sinceHours": 24,
    "gitBranch": "no-such-branch",  # the server records the branch of its cwd: never match it
    "ok": True,
    "tool": "mm_click",
    "after": "2020-01-01T00:00:00Z",
    "before": "2100-01-01T00:00:00Z",
}
SCOPE = {"sessionId": SESSION}


@pytest.fixture(scope="module")
def recorded(inspector: Inspector) -> dict[str, Any]:
    """A session started and a step recorded through the Inspector, every argument kind used."""
    started = inspector.ok(
        "mm_knowledge_start_session",
        goal="Send ETH",
        flowTags=["send"],
        tags=["smoke"],
        sessionId=SESSION,
        build={"buildType": "build:test"},
        launch={"stateMode": "default"},
    )
    assert started["sessionId"] == SESSION
    return inspector.ok(
        "mm_knowledge_record_step",
        sessionId=SESSION,
        timestamp="2026-01-01T10:00:00Z",
        schemaVersion=1,
        tool={
            "name": "mm_click",
            "input": {"testId": "coin-overview-send"},
            "target": {"testId": "coin-overview-send"},
            "textRedacted": False,
            "textLength": 0,
        },
        outcome={"ok": True},
        observation={"state": {"currentScreen": "home"}, "testIds": [], "a11y": {"nodes": []}},
        labels=["interaction"],
    )


def test_recording_tools_take_arrays_objects_booleans_and_date_times(
    inspector: Inspector, recorded: dict[str, Any]
) -> None:
    assert recorded["stepId"] == STEP_ID
    assert inspector.ok("mm_knowledge_status")["isWriter"] is True


def test_knowledge_tools_take_filters_and_both_kinds_of_scope(
    inspector: Inspector, recorded: dict[str, Any]
) -> None:
    def found() -> bool:  # the live indexer catches up within a second; poll, do not time it
        page = inspector.ok(
            "mm_knowledge_search",
            query="coin overview send",
            limit=5,
            offset=0,
            scope=SCOPE,
            filters={k: v for k, v in FILTERS.items() if k != "gitBranch"},
        )
        return [r["stepId"] for r in page["results"]] == [STEP_ID]

    wait_for(found)
    everything = inspector.ok(
        "mm_knowledge_search", query="send", scope="all", includeSuperseded=True
    )
    assert everything["total"] == 1
    assert inspector.ok("mm_knowledge_search", query="send", filters=FILTERS)["total"] == 0
    last = inspector.ok(
        "mm_knowledge_last", n=5, scope=SCOPE, filters={"ok": True}, includeSuperseded=False
    )
    assert [s["stepId"] for s in last["steps"]] == [STEP_ID]
    for summary_args in ({"scope": SCOPE}, {"sessionId": SESSION}):
        recipe = inspector.ok("mm_knowledge_summarize", **summary_args)
        assert recipe["session"]["sessionId"] == SESSION
    listed = inspector.ok("mm_knowledge_sessions", limit=5, filters={"flowTag": "send"})
    assert [s["sessionId"] for s in listed["sessions"]] == [SESSION]


def test_lifecycle_tools_take_step_ids_depths_and_enums(
    inspector: Inspector, recorded: dict[str, Any]
) -> None:
    """Runs after the search test: superseding the step hides it from default searches."""
    wait_for(lambda: inspector.ok("mm_knowledge_search", query="send")["total"] == 1)
    line = inspector.ok("mm_knowledge_timeline", anchor=STEP_ID, before=2, after=0, scope="all")
    assert line["anchor"]["stepId"] == STEP_ID and line["before"] == [] == line["after"]
    assert line["sessions"][SESSION]["goal"] == "Send ETH"
    by_query = inspector.ok("mm_knowledge_timeline", query="coin overview send", scope="session")
    assert by_query["anchor"]["stepId"] == STEP_ID
    context = inspector.ok("mm_knowledge_session_context", stepId=STEP_ID)
    assert context["usageType"] == "created" and context["stepCount"] == 1
    refused = inspector.call("mm_knowledge_supersede", stepId=STEP_ID, supersededBy=STEP_ID)
    assert refused["error"]["code"] == "MM_INVALID_INPUT"
    done = inspector.ok("mm_knowledge_supersede", stepId=STEP_ID, reason="the button moved")
    assert done["isSuperseded"] is True and done["reason"] == "the button moved"
    wait_for(lambda: inspector.ok("mm_knowledge_search", query="send")["total"] == 0)


def test_clustering_tools_take_numbers_arrays_enums_and_filters(
    inspector: Inspector, recorded: dict[str, Any]
) -> None:
    """With includeSuperseded: the lifecycle test may already have superseded the step."""
    wait_for(
        lambda: inspector.ok("mm_knowledge_last", scope="all", includeSuperseded=True)["total"]
    )
    found = inspector.ok(
        "mm_knowledge_find_duplicates",
        similarityThreshold=0.9,
        types=["step", "session"],
        filters={"flowTag": "send"},
        includeSuperseded=True,
        limit=5,
    )
    assert found["similarityThreshold"] == 0.9 and found["types"] == ["step", "session"]
    assert found["memories"] == 2  # one step, one session: no duplicates yet
    clusters = inspector.ok(
        "mm_knowledge_cluster",
        type="step",
        nClusters=2,
        filters={"ok": True},
        includeSuperseded=True,
    )
    assert clusters["memories"] == 1 and len(clusters["clusters"]) == 1 and clusters["hint"]


BROWSER_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("mm_navigate", {"url": "#/send", "timeoutMs": 1000}),
    ("mm_click", {"a11yHint": {"role": "button", "name": "Send"}, "timeoutMs": 1000}),
    ("mm_type", {"testId": "amount", "text": "one tenth", "timeoutMs": 1000}),
    ("mm_wait_for", {"a11yRef": "e3", "state": "hidden", "timeoutMs": 1000}),
    ("mm_describe_screen", {}),
    ("mm_list_testids", {"limit": 10}),
    ("mm_accessibility_snapshot", {}),
    ("mm_get_state", {}),
    ("mm_screenshot", {"name": "home", "fullPage": True}),
    ("mm_cleanup", {}),
]
KNOWLEDGE_TOOLS = {
    "mm_knowledge_start_session",
    "mm_knowledge_record_step",
    "mm_knowledge_status",
    "mm_knowledge_search",
    "mm_knowledge_last",
    "mm_knowledge_summarize",
    "mm_knowledge_sessions",
    "mm_knowledge_timeline",
    "mm_knowledge_session_context",
    "mm_knowledge_supersede",
    "mm_knowledge_find_duplicates",
    "mm_knowledge_cluster",
}


@pytest.mark.parametrize(("tool", "args"), BROWSER_CALLS, ids=[t for t, _ in BROWSER_CALLS])
def test_browser_tools_accept_every_argument_kind(
    inspector: Inspector, tool: str, args: dict[str, Any]
) -> None:
    """Without a launched browser each call is refused for that reason, never for its input."""
    envelope = inspector.call(tool, **args)
    assert envelope["ok"] is False and envelope["error"]["code"] != "MM_INVALID_INPUT", envelope


def test_launch_converts_its_arguments_and_then_checks_the_extension(inspector: Inspector) -> None:
    envelope = inspector.call(
        "mm_launch", extensionPath="/no/such/ext", goal="Send", flowTags=["send"]
    )
    assert envelope["error"]["code"] == "MM_INVALID_INPUT"
    assert envelope["error"]["message"].startswith("extensionPath: no manifest.json")


def test_the_inspector_finds_no_schema_portability_problem(inspector: Inspector) -> None:
    command = [str(INSPECTOR), "--cli", inspector.url, "--method", "tools/list", "--strict"]
    env = {**os.environ, "HOME": str(inspector.home)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr
    assert "$ref" not in done.stdout
    listed = {tool["name"] for tool in json.loads(done.stdout)["tools"]}
    called = KNOWLEDGE_TOOLS | {tool for tool, _ in BROWSER_CALLS} | {"mm_launch"}
    assert listed == called, "a new tool? call it through the Inspector here too"


def inspect(inspector: Inspector, method: str, *extra: str) -> dict[str, Any]:
    """Any other method through the Inspector CLI; the JSON it printed."""
    command = [str(INSPECTOR), "--cli", inspector.url, "--method", method, *extra]
    env = {**os.environ, "HOME": str(inspector.home)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, (done.stdout, done.stderr)
    answer, _ = json.JSONDecoder().raw_decode(done.stdout.strip() or "{}")
    return dict(answer)


def test_the_inspector_lists_and_reads_resources_and_gets_prompts(
    inspector: Inspector, recorded: dict[str, Any]
) -> None:
    def listed() -> bool:
        uris = {r["uri"] for r in inspect(inspector, "resources/list")["resources"]}
        return f"knowhow://sessions/{SESSION}" in uris

    wait_for(listed)
    templates = inspect(inspector, "resources/templates/list")["resourceTemplates"]
    assert "knowhow://steps/{sessionId}/{step}" in {t["uriTemplate"] for t in templates}
    read = inspect(inspector, "resources/read", "--uri", f"knowhow://steps/{STEP_ID}")
    assert [c["mimeType"] for c in read["contents"]] == ["application/json", "text/markdown"]
    assert json.loads(read["contents"][0]["text"])["step"]["stepId"] == STEP_ID
    recipe = inspect(inspector, "resources/read", "--uri", f"knowhow://sessions/{SESSION}/recipe")
    assert json.loads(recipe["contents"][0]["text"])["session"]["sessionId"] == SESSION
    prompt = inspect(
        inspector, "prompts/get", "--prompt-name", "before_flow", "--prompt-args", "flowTag=send"
    )
    assert f"knowhow://sessions/{SESSION}/recipe" in prompt["messages"][0]["content"]["text"]
