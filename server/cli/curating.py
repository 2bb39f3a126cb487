"""Commands that keep the knowledge clean: supersede a step that no longer works, and look over
all memories for duplicates and clusters."""

from functools import partial
from typing import Annotated, Any

import typer
from rich.markup import escape

from engine import (
    ClusterInput,
    ClusterList,
    DuplicateList,
    DuplicatesInput,
    KnowledgeStore,
    SupersedeInput,
    supersede_step,
    validate,
)
from server.cli.answer import Answer, Call, answers
from server.cli.options import STEP_FILTERS, SupersededOpt
from server.cli.render import cells_table, err, out


@answers()
def supersede(
    step_id: Annotated[
        str, typer.Argument(metavar="STEP_ID", help="The step that no longer works as recorded")
    ],
    by: Annotated[str | None, typer.Option("--by", help="The newer step that works")] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why")] = None,
    *,
    call: Call,
) -> Answer:
    """Mark a step superseded (written to its session's superseded.json; `knowhow index` or a
    running server re-indexes it)."""
    request_data = {"stepId": step_id, "supersededBy": by, "reason": reason}
    request = {k: v for k, v in request_data.items() if v is not None}
    store = KnowledgeStore(call.settings.root)
    done = supersede_step(store, validate(SupersedeInput, request))
    return done, partial(out.print, f"{done.stepId} superseded ({done.supersededAt})")


@answers(STEP_FILTERS)
def duplicates(
    threshold: Annotated[
        float, typer.Option("--threshold", help="Lowest cosine (0..1) within a group")
    ] = 0.95,
    types: Annotated[
        list[str] | None,
        typer.Option("--type", help="step, screen and/or session (repeat; default all)"),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-k", help="Groups shown (1..100)")] = 20,
    include_superseded: SupersededOpt = False,
    *,
    call: Call,
) -> Answer:
    """Groups of near-identical memories, largest first, with counts and example ids."""
    request_data: dict[str, Any] = {"similarityThreshold": threshold, "limit": limit}
    request_data |= {"filters": call.filters, "includeSuperseded": include_superseded}
    request_data |= {"types": types} if types else {}
    found = call.engine().find_duplicates(validate(DuplicatesInput, request_data))
    return found, partial(_show_duplicates, found)


def _show_duplicates(found: DuplicateList) -> None:
    cells_table(
        f"duplicate groups ({found.total} in all, {found.memories} memories)",
        ["type", "count", "texts", "text", "examples"],
        [
            [g.type, str(g.count), str(g.distinctTexts), g.text or "?", "\n".join(g.examples[:2])]
            for g in found.groups
        ],
    )
    if found.degraded:
        err.print(f"[yellow]only identical texts grouped[/yellow]: {escape(found.degraded)}")


@answers(STEP_FILTERS)
def cluster(
    kind: Annotated[
        str, typer.Option("--type", help="step, screen or session (default step)")
    ] = "step",
    clusters: Annotated[int, typer.Option("--clusters", "-n", help="How many (2..50)")] = 5,
    include_superseded: SupersededOpt = False,
    *,
    call: Call,
) -> Answer:
    """Cluster one type of memory by meaning: size, top terms and examples of each cluster."""
    request_data = {"type": kind, "nClusters": clusters, "filters": call.filters}
    request_data |= {"includeSuperseded": include_superseded}
    found = call.engine().cluster(validate(ClusterInput, request_data))
    return found, partial(_show_clusters, found)


def _show_clusters(found: ClusterList) -> None:
    cells_table(
        f"{found.type} clusters ({found.memories} memories)",
        ["size", "top terms", "nearest the centre", "example"],
        [
            [str(c.size), ", ".join(c.topTerms), c.text or "?", (c.examples or [""])[0]]
            for c in found.clusters
        ],
    )
    for note in (found.hint, found.degraded):
        if note:
            out.print(escape(note))
