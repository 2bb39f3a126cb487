"""The task file of the explorer and `scripts/bench_reuse.py`: what to do, in a user's words.

A task names no testId, selector or screen of the app: only its start (a route or path
relative to the app's URL), the goal, the values to type keyed by the accessible name of their
field, the name of the final button and a text that shows success. So the same file drives an
app the agent has never seen, and its renamed variant.

A bad file fails before any browser starts, with the task and the field named:
`task 2 ("send"): inputs.Amount: Input should be a valid string`.
"""

import re
from pathlib import Path
from typing import Annotated
from urllib.error import URLError
from urllib.parse import urldefrag, urljoin
from urllib.request import urlopen

import orjson
from pydantic import Field, ValidationError

from engine import Strict
from server.inputs import Tag

DEFAULT_BUDGET = 60
"""Tool calls one agent may make for one task (launch included, cleanup not)."""
START_CHECK_TIMEOUT_S = 10.0

Text = Annotated[str, Field(min_length=1, max_length=500)]


class Task(Strict):
    """One task, e.g. `{"name": "send", "start": "#/unlock", "goal": "Send 0.1 ETH to
    account 2", "flowTags": ["send"], "inputs": {"Amount": "0.1"}, "submit": "Confirm",
    "doneText": "9.9 ETH"}`."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")]
    start: Annotated[str, Field(max_length=2000)]
    """A route ("#/unlock") or path ("index.html") relative to the app's URL; "" is the URL."""
    goal: Text
    flowTags: Annotated[list[Tag], Field(max_length=20)] = Field(default_factory=list)
    inputs: dict[Text, Annotated[str, Field(max_length=10_000)]] = Field(default_factory=dict)
    """Text to type, keyed by the accessible name of the field (its label)."""
    submit: Text
    """The accessible name of the final button (or link, switch, menu item)."""
    doneText: Text
    """Text that is visible once the task succeeded."""
    budget: Annotated[int, Field(ge=1, le=500, strict=True)] = DEFAULT_BUDGET


class TaskFileError(ValueError):
    """The task file cannot be used; the message names the task and the field."""


def load_tasks(path: Path) -> list[Task]:
    """Every task of a JSON file holding a list of tasks; every problem at once, or none."""
    try:
        raw = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise TaskFileError(f"{path}: {exc}") from None
    if not isinstance(raw, list) or not raw:
        raise TaskFileError(f"{path}: expected a non-empty JSON list of tasks")
    tasks: list[Task] = []
    problems: list[str] = []
    for number, item in enumerate(raw, 1):
        label = _label(number, item)
        try:
            tasks.append(Task.model_validate(item))
        except ValidationError as exc:
            problems += [f"{label}: {_where(e['loc'])}: {e['msg']}" for e in exc.errors()]
    names = [item.get("name") for item in raw if isinstance(item, dict)]
    twice = sorted({str(n) for n in names if n is not None and names.count(n) > 1})
    problems += [f"name {n!r} is used twice" for n in twice]
    if problems:
        raise TaskFileError(f"{path}: " + "; ".join(problems))
    return tasks


def _label(number: int, item: object) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return f"task {number} ({name!r})" if isinstance(name, str) else f"task {number}"


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(the task)"


def task_url(base: str, start: str) -> str:
    """The start of a task on an app: `#/send` on `http://h/?variant=renamed` is
    `http://h/?variant=renamed#/send`; a path is joined as a link would be."""
    return urljoin(base, start)


def check_starts(tasks: list[Task], bases: list[str]) -> None:
    """Every task's start page answers on every app URL, before any browser starts."""
    problems = []
    for task in tasks:
        for base in bases:
            url = task_url(base, task.start)
            reason = _unreachable(urldefrag(url).url)
            if reason:
                problems.append(f"task {task.name!r}: start: {url} does not load ({reason})")
    if problems:
        raise TaskFileError("; ".join(problems))


def _unreachable(url: str) -> str | None:
    if not re.match(r"^https?://", url):
        return "not an http(s) URL"
    try:
        with urlopen(url, timeout=START_CHECK_TIMEOUT_S) as response:
            status = int(response.status)
    except (URLError, OSError, ValueError) as exc:
        return str(getattr(exc, "reason", exc))
    return None if status < 400 else f"HTTP {status}"
