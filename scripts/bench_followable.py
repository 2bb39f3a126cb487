"""Followable suggestions, replayed: of priorKnowledge's top 3 on every recorded screen, how many
could have been followed there.

    .venv/bin/python scripts/bench_followable.py --root ROOT --index DIR [--name APP] [--write]

Why it exists: `bench_reuse.py`'s `top3Precision` is measured on the screens agent B happened to
see, and B's path depends on the suggestions it got, so two versions of knowhow compared there
are compared on different screens (and an explorer that goes its own way on an animated page
sees different ones from run to run). This replays instead: every `mm_describe_screen` recorded
under ROOT (a reuse run's knowledge root, say) is asked again for priorKnowledge from ROOT's index,
as the server would ask it at that moment — the same screen, its own session's steps left out —
and the top 3 suggestions are scored with the explorer's own test (`Screen.has_target`: on that
screen, enabled, inside the open dialog when there is one). The same screens for every version.
Prints one JSON line {"app", "screens", "shown", "followable", "top3Precision"}; `--write` stores
the section `bench-followable-APP` of docs/benchmarks.md.
"""

import argparse
import json
from pathlib import Path
from typing import Any

from bench_common import fmt, machine, machine_md, md_table, out, write_section

from engine import KnowledgeEngine
from engine.history import ScreenContext
from engine.index import effective_screen
from engine.records import KnowledgeStore
from explorer.screen import Screen

TOP = 3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="knowledge root to replay")
    parser.add_argument("--index", type=Path, required=True, help="its index directory")
    parser.add_argument("--name", default="app", help="the app's name in the report")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    result = {"app": args.name, **replay(args.root, args.index)}
    if args.write:
        body = (
            f"### Followable suggestions on {args.name}, replayed\n\n{machine_md(machine())}\n"
            + md_table(
                ["screens", "top-3 suggestions", "followable", "top3Precision"],
                [
                    [
                        str(result["screens"]),
                        str(result["shown"]),
                        str(result["followable"]),
                        fmt(result["top3Precision"]),
                    ]
                ],
            )
        )
        write_section(f"bench-followable-{args.name}", body)
    out(json.dumps(result))
    return 0


def replay(root: Path, index: Path) -> dict[str, Any]:
    """Every recorded describe asked again; its top 3 scored on its own screen."""
    engine = KnowledgeEngine(root, index)
    store = KnowledgeStore(root)
    screens = shown = followable = 0
    for session_id in store.session_ids():
        loaded = store.load_session(session_id)
        for step in loaded.steps:
            record = step.record
            if not record.tool.name.endswith("describe_screen"):
                continue
            context = ScreenContext.seen(
                record.observation,
                effective_screen(record),
                session_id=session_id,
                flow_tags=loaded.metadata.flowTags,
                goal=loaded.metadata.goal,
            )
            prior = engine.prior_knowledge(context).to_json_dict()
            seen = Screen.of(
                {**record.observation.model_dump(mode="json"), "priorKnowledge": prior}
            )
            top = seen.suggestions[:TOP]
            screens += 1
            shown += len(top)
            followable += sum(seen.has_target(s["preferredTarget"]) for s in top)
    precision = round(followable / shown, 3) if shown else None
    return {
        "screens": screens,
        "shown": shown,
        "followable": followable,
        "top3Precision": precision,
    }


if __name__ == "__main__":
    raise SystemExit(main())
