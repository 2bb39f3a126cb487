"""Step labels derived from the tool and the outcome (IMPROVEMENT-01 §4.2, as the TS recorder does).

discovery: describe_screen, list_testids, accessibility_snapshot, get_state
navigation: navigate, wait_for_notification
interaction: click, type, wait_for — plus `confirmation` when the target mentions confirm,
approve or submit. Any failure adds `error-recovery`. Other tools (launch, screenshot,
cleanup) get no label.
"""

from functools import lru_cache

from engine.records.models import StepRecord, StepTarget

DISCOVERY_TOOLS = frozenset(
    {"describe_screen", "list_testids", "accessibility_snapshot", "get_state"}
)
NAVIGATION_TOOLS = frozenset({"navigate", "wait_for_notification"})
INTERACTION_TOOLS = frozenset({"click", "type", "wait_for"})
_CONFIRM_WORDS = ("confirm", "approve", "submit")


KNOWN_ACTIONS = sorted(
    DISCOVERY_TOOLS
    | NAVIGATION_TOOLS
    | INTERACTION_TOOLS
    | {"launch", "screenshot", "cleanup", "list_testids"},
    key=len,
    reverse=True,
)


@lru_cache(maxsize=1024)
def tool_action(tool_name: str) -> str:
    """`mm_click` -> `click`: the tool without its (configurable, possibly empty) prefix.

    Known actions are matched as suffixes, so `describe_screen`, `app_wait_for` and
    `my_app_click` all resolve; an unknown tool loses everything up to its first `_`.
    """
    for action in KNOWN_ACTIONS:
        if tool_name == action or tool_name.endswith("_" + action):
            return action
    return tool_name.split("_", 1)[1] if "_" in tool_name else tool_name


def derive_labels(tool_name: str, target: StepTarget | None, ok: bool) -> list[str]:
    action = tool_action(tool_name)
    labels: list[str] = []
    if action in DISCOVERY_TOOLS:
        labels.append("discovery")
    elif action in NAVIGATION_TOOLS:
        labels.append("navigation")
    elif action in INTERACTION_TOOLS:
        labels.append("interaction")
        if target is not None:
            text = target.model_dump_json(exclude_none=True).lower()
            if any(word in text for word in _CONFIRM_WORDS):
                labels.append("confirmation")
    if not ok:
        labels.append("error-recovery")
    return labels


def record_labels(record: StepRecord) -> list[str]:
    """A step's labels: the recorder's own when it gave some, else derived from tool and outcome."""
    if record.labels is not None:
        return record.labels
    return derive_labels(record.tool.name, record.tool.target, record.outcome.ok)


def labelled(record: StepRecord) -> StepRecord:
    """The record with its labels filled in, as it is stored."""
    if record.labels is not None:
        return record
    return record.model_copy(update={"labels": record_labels(record)})
