"""The options several commands share, declared once: where the knowledge is, `--json`, scopes,
the semantic search options and the filters."""

from pathlib import Path
from typing import Annotated, Any

import typer

# Help text is rich markup: "[env …]" would be read as a tag and vanish, hence the parentheses.
RootOpt = Annotated[
    Path | None,
    typer.Option(
        "--root", help="Knowledge root (default ./test-artifacts/llm-knowledge; env KNOWHOW_ROOT)"
    ),
]
IndexOpt = Annotated[
    Path | None, typer.Option("--index", help="Index dir (default ./index-data; env KNOWHOW_INDEX)")
]
HostOpt = Annotated[str | None, typer.Option("--host", help="HTTP address (default 127.0.0.1)")]
PortOpt = Annotated[int | None, typer.Option("--port", help="HTTP port (default 8765)")]
TokenOpt = Annotated[
    str | None, typer.Option("--token", help="Bearer token for HTTP (env KNOWHOW_TOKEN)")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output")]
ScopeOpt = Annotated[str, typer.Option("--scope", help="'all', 'current' or a session id")]
OneScopeOpt = Annotated[str, typer.Option("--scope", help="'current' or a session id")]
SessionOpt = Annotated[
    str | None,
    typer.Option("--session", help="Session that scope 'current' means (default: newest)"),
]
ModeOpt = Annotated[
    str, typer.Option("--mode", help="hybrid (words and meaning), keyword or semantic")
]
MinSimOpt = Annotated[
    float | None,
    typer.Option("--min-similarity", help="Lowest cosine (0..1) a semantic-only hit needs"),
]
TypeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--type", help="step and/or screen (repeat; default both), or session (workflows) alone"
    ),
]
ShowSupersededOpt = Annotated[
    bool,
    typer.Option("--include-superseded", help="Also show superseded steps, flagged, and why"),
]
MinSalienceOpt = Annotated[
    float | None,
    typer.Option(
        "--min-salience", help="Only steps later sessions followed, at least this salient (0..1)"
    ),
]
SupersededOpt = Annotated[
    bool, typer.Option("--include-superseded", help="Also count superseded steps")
]

FlowOpt = Annotated[str | None, typer.Option("--flow-tag", help="Only sessions with this flowTag")]
TagOpt = Annotated[str | None, typer.Option("--tag", help="Only sessions with this tag")]
ScreenOpt = Annotated[str | None, typer.Option("--screen", help="Only steps on this screen")]
SinceOpt = Annotated[int | None, typer.Option("--since-hours", help="Sessions of the last N hours")]
BranchOpt = Annotated[str | None, typer.Option("--git-branch", help="Only this git branch")]
OkOpt = Annotated[
    bool | None, typer.Option("--ok/--failed", help="Only successful / only failed steps")
]
ToolOpt = Annotated[
    str | None,
    typer.Option("--tool", help="Only this tool (mm_click or click; a batch holding it too)"),
]
ContextOpt = Annotated[
    str | None, typer.Option("--context", help="Only steps recorded against e2e or prod")
]
StateModeOpt = Annotated[
    str | None,
    typer.Option("--state-mode", help="Only sessions launched as default, onboarding or custom"),
]
PresetOpt = Annotated[
    str | None, typer.Option("--fixture-preset", help="Only sessions launched with this preset")
]
AfterOpt = Annotated[str | None, typer.Option("--after", help="Steps at or after (ISO time)")]
BeforeOpt = Annotated[str | None, typer.Option("--before", help="Steps before (ISO time)")]

Filters = dict[str, tuple[str, Any]]
"""CLI option name -> (its name in a request's `filters`, the option)."""

SESSION_FILTERS: Filters = {
    "flow_tag": ("flowTag", FlowOpt),
    "tag": ("tag", TagOpt),
    "since_hours": ("sinceHours", SinceOpt),
    "git_branch": ("gitBranch", BranchOpt),
    "state_mode": ("stateMode", StateModeOpt),
    "fixture_preset": ("fixturePreset", PresetOpt),
}
STEP_FILTERS: Filters = SESSION_FILTERS | {
    "screen": ("screen", ScreenOpt),
    "ok": ("ok", OkOpt),
    "tool": ("tool", ToolOpt),
    "after": ("after", AfterOpt),
    "before": ("before", BeforeOpt),
    "context": ("context", ContextOpt),
}
"""Search, last, duplicates and cluster take all the filters, sessions the session ones; a
command names its set in `answers`, which adds the options and gathers what was given."""
