"""The explorer's pieces that need no browser: the task file (bad input named before any
browser starts, by task and field), `bench_reuse.py` refusing such a file, what a describe
result means to the agent (sections, targets), recipes read from search results, and the
exploration's bookkeeping (a menu is reopened for what it revealed)."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from explorer import Report, TaskFileError, check_starts, load_tasks, task_url
from explorer.exploring import Exploration
from explorer.recipe import done_selector, recipe
from explorer.scores import scores
from explorer.screen import Screen, best, words
from tests.server.mcp_helpers import REPO, free_port

SEND = {
    "name": "send",
    "start": "#/unlock",
    "goal": "Send 0.1 ETH to account 2",
    "flowTags": ["send"],
    "inputs": {"Recipient address": "0x2f318C334780961FB129D2a6c30D0763d9a5C970"},
    "submit": "Confirm",
    "doneText": "9.9 ETH",
}


def write(tmp_path: Path, tasks: Any) -> Path:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    return path


def test_bundled_task_files_are_valid() -> None:
    dapp = load_tasks(REPO / "scripts" / "reuse" / "test-dapp.json")
    wallet = load_tasks(REPO / "scripts" / "reuse" / "demo-wallet.json")
    assert len(dapp) >= 5 and {"connect", "personal-sign", "typed-data-v4"} <= {
        t.name for t in dapp
    }
    assert {t.name for t in wallet} >= {"send", "swap"}
    assert all(t.budget == 60 for t in dapp + wallet)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"doneText": None}, "task 1 ('send'): doneText"),
        ({"colour": "red"}, "task 1 ('send'): colour: Extra inputs are not permitted"),
        ({"inputs": {"Amount": 0.1}}, "task 1 ('send'): inputs.Amount"),
        ({"budget": 0}, "task 1 ('send'): budget"),
        ({"name": "no spaces"}, "task 1 ('no spaces'): name: String should match"),
    ],
)
def test_a_bad_task_is_named_with_its_field(
    tmp_path: Path, change: dict[str, Any], named: str
) -> None:
    task = {**SEND, **change}
    task = {k: v for k, v in task.items() if v is not None}
    with pytest.raises(TaskFileError) as raised:
        load_tasks(write(tmp_path, [task]))
    assert named in str(raised.value)


def test_every_problem_of_a_file_is_reported_at_once(tmp_path: Path) -> None:
    second = {**SEND, "name": "swap"}
    del second["submit"]
    with pytest.raises(TaskFileError) as raised:
        load_tasks(write(tmp_path, [{**SEND, "goal": ""}, second, SEND]))
    message = str(raised.value)
    assert "task 1 ('send'): goal" in message and "task 2 ('swap'): submit" in message
    assert "name 'send' is used twice" in message


@pytest.mark.parametrize("content", ["{}", "[]", "not json"])
def test_a_file_that_is_not_a_task_list_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(content)
    with pytest.raises(TaskFileError, match=str(path)):
        load_tasks(path)


def test_start_is_relative_to_the_app_url() -> None:
    assert task_url("http://h:1/", "#/send") == "http://h:1/#/send"
    assert task_url("http://h:1/?variant=renamed", "#/send") == "http://h:1/?variant=renamed#/send"
    assert task_url("http://h:1/app/", "request.html") == "http://h:1/app/request.html"
    assert task_url("http://h:1/", "") == "http://h:1/"


def test_a_start_page_that_does_not_load_is_named(tmp_path: Path) -> None:
    tasks = load_tasks(write(tmp_path, [SEND]))
    url = f"http://127.0.0.1:{free_port()}/"
    with pytest.raises(
        TaskFileError, match=r"task 'send': start: http://127\.0\.0\.1:\d+/#/unlock"
    ):
        check_starts(tasks, [url])


def test_bench_reuse_stops_on_a_bad_task_file_before_any_browser(tmp_path: Path) -> None:
    bad = write(tmp_path, [{**SEND, "submit": ""}])
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "bench_reuse.py"),
            *("--url", f"http://127.0.0.1:{free_port()}/", "--tasks", str(bad)),
            *("--root", str(tmp_path / "root"), "--index", str(tmp_path / "index")),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "task 1 ('send'): submit" in done.stderr
    assert not (tmp_path / "root").exists()


def describe(nodes: list[tuple[str, str, bool]], test_ids: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "state": {"currentScreen": "test-dapp", "currentUrl": "http://h/"},
        "testIds": [{"testId": t, "text": x, "visible": True} for t, x in test_ids],
        "a11y": {
            "nodes": [
                {"ref": f"e{i}", "role": r, "name": n, "disabled": d}
                for i, (r, n, d) in enumerate(nodes, 1)
            ]
        },
    }


DAPP = describe(
    [
        ("heading", "Connect Actions", False),
        ("button", "Connect", False),
        ("heading", "Eth Sign", False),
        ("button", "Sign", True),
        ("heading", "Personal Sign", False),
        ("button", "Sign", True),
        ("button", "Verify", True),
    ],
    [("connect-button", "Connect")],
)


def test_elements_know_their_section_and_the_goal_picks_among_namesakes() -> None:
    screen = Screen.of(DAPP)
    signs = screen.named("button", "Sign")
    assert [e.section for e in signs] == ["Eth Sign", "Personal Sign"]

    chosen = best(signs, words("Sign a message with personal sign"))
    assert chosen is not None and chosen.section == "Personal Sign"
    assert screen.target(chosen) == {"a11yRef": chosen.ref}  # the name alone is ambiguous
    connect = screen.named("button", "Connect")[0]
    assert screen.target(connect) == {"testId": "connect-button"}
    assert screen.target(screen.named("button", "Verify")[0]) == {
        "a11yHint": {"role": "button", "name": "Verify"}
    }
    assert [e.name for e in screen.clickables()] == ["Connect"]


def test_a_suggestion_is_followable_when_shown_enabled_and_not_behind_a_dialog() -> None:
    screen = Screen.of(DAPP)
    assert screen.has_target({"type": "testId", "value": "connect-button"})
    assert not screen.has_target({"type": "a11yHint", "value": {"role": "button", "name": "Sign"}})
    wizard = Screen.of(describe([("button", "Next", True)], [("wizard-next", "Next")]))
    assert not wizard.has_target({"type": "testId", "value": "wizard-next"})  # shown disabled
    dialog = describe([("button", "Delete", False), ("button", "Keep", False)], [("del", "Delete")])
    dialog["a11y"]["nodes"][1]["path"] = ['dialog "Delete the profile?"']
    behind = Screen.of(dialog)
    assert behind.has_target({"type": "a11yHint", "value": {"role": "button", "name": "Keep"}})
    assert not behind.has_target({"type": "testId", "value": "del"})


def row(step: int, tool: str, screen: str, session: str = "s1", **target: str) -> dict[str, Any]:
    return {
        "sessionId": session,
        "stepId": f"{session}/{step:04d}-{tool}",
        "tool": tool,
        "screen": screen,
        "ok": True,
        "target": target or None,
    }


def test_a_recipe_is_the_shortest_session_that_reached_the_done_text() -> None:
    done = done_selector("9.9 ETH")
    explored = [
        row(1, "mm_launch", "home"),
        row(2, "mm_click", "settings", role="menuitem", name="Settings"),
        row(3, "mm_click", "settings", role="switch", name="Show fiat"),
        row(3, "mm_navigate", "home"),  # backed out of a dead end: the detour is cut
        row(4, "mm_click", "send", role="button", name="Send", testId="coin-overview-send"),
        row(5, "mm_type", "send", role="textbox", name="Amount"),
        row(6, "mm_type", "send", role="textbox", name="Amount"),
        row(7, "mm_click", "confirm", role="button", name="Continue"),
        row(8, "mm_click", "home", role="button", name="Confirm"),
        row(9, "mm_wait_for", "home", selector=done),
    ]
    unfinished = [
        row(1, "mm_launch", "home", session="s2"),
        row(2, "mm_click", "home", session="s2", role="button", name="Confirm"),
    ]
    frames = recipe(unfinished + list(reversed(explored)), "9.9 ETH")
    assert frames is not None
    assert [f.screen for f in frames] == ["home", "send", "confirm"]
    assert [s.name for s in frames[0].clicks] == ["Settings", "Send"]  # Send left home
    assert [s.name for s in frames[1].typed] == ["Amount"]
    assert [s.name for s in frames[2].clicks] == ["Confirm"]
    assert recipe(unfinished, "9.9 ETH") is None


def test_a_menu_is_reopened_for_what_it_revealed() -> None:
    closed = describe([("button", "Account menu", False), ("button", "Send", False)], [])
    opened = describe(
        [
            ("button", "Account menu", False),
            ("menuitem", "Activity", False),
            ("menuitem", "Settings", False),
            ("button", "Send", False),
        ],
        [],
    )
    explored = Exploration(words("Lock the wallet"), "Lock wallet")
    first = explored.next_click(Screen.of(closed))
    assert first is not None and first.name == "Account menu"
    explored.clicked(Screen.of(closed), first, None)
    explored.seen(Screen.of(opened))
    item = explored.next_click(Screen.of(opened))
    assert item is not None and item.name == "Activity"
    explored.clicked(Screen.of(opened), item, "http://h/#/activity")
    again = explored.next_click(Screen.of(closed))  # Settings is hidden and untried
    assert again is not None and again.name == "Account menu"


def test_scores_count_savings_over_tasks_both_agents_completed() -> None:
    a = [
        Report("t1", "A", False, completed=True, calls=10),
        Report("t2", "A", False, completed=False, calls=60),
    ]
    b = [
        Report("t1", "B", True, completed=True, calls=4, shown=6, precise=5),
        Report("t2", "B", True, completed=True, calls=7, shown=3, precise=3),
    ]
    c = [Report("t1", "C", True, completed=True, calls=4, renamed=4, renamed_correct=3)]
    assert scores(a, b, c) == {
        "tasks": 2,
        "completedA": 1,
        "completedB": 2,
        "callsA": 70,
        "callsB": 11,
        "saved": 0.6,
        "top3Precision": 0.889,
        "renamedCorrect": 0.75,
    }
    assert scores(a, b)["renamedCorrect"] is None
