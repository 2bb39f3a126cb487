"""Where flows break, counted from the index alone: the web page's charts.

Nothing here reads a step file, and nearly nothing reads a stored document. Steps per day come
from a histogram aggregation of the `ts` fast field (columnar), one per flow and outcome; the
flows and screens are the terms of the `flow_tag` and `screen_name` fields, each counted with a
term query; superseded steps are counted by their flag. Only the targets that fail most read
stored payloads, those of the latest `FAILURES_READ` failed steps. The window is the `days` days
up to the newest step's day, so an index of old recordings still shows its activity.
"""

from collections import Counter
from datetime import UTC, datetime

import tantivy

from engine.core import Result
from engine.index import DOC_STEP, all_of, count, int_range, read_payload, term
from engine.query import describe_target

DAY_MS = 86_400_000
DAYS = 60
TOP_FLOWS = 8
TOP_SCREENS = 12
TOP_TARGETS = 12
FAILURES_READ = 2_000
"""Latest failed steps whose payloads are read for the failing targets."""
TERMS_READ = 500
"""Flows and screens considered (the index's terms, in byte order)."""


class FlowActivity(Result):
    flow: str
    steps: list[int]
    """Steps recorded per day of the window, oldest day first."""
    failed: list[int]


class ScreenFailures(Result):
    screen: str
    failed: int
    steps: int


class TargetFailures(Result):
    screen: str
    target: str
    failed: int


class Activity(Result):
    firstDay: str
    days: int
    steps: int
    flows: list[FlowActivity]
    """The busiest flows of the window, busiest first."""
    screens: list[ScreenFailures]
    """The screens with the most failed steps in the window."""
    targets: list[TargetFailures]
    failuresRead: int
    """How many of the latest failed steps `targets` was counted from."""
    superseded: int


def count_activity(
    searcher: tantivy.Searcher, schema: tantivy.Schema, days: int = DAYS
) -> Activity | None:
    """The index's activity over `days` days up to its newest step; None when it holds none."""
    steps = term(schema, "doc_type", DOC_STEP)
    newest = searcher.search(steps, limit=1, order_by_field="ts")
    if not newest.hits:
        return None
    last_ts = int(searcher.doc(newest.hits[0][1]).get_first("ts") or 0)
    end = (last_ts // DAY_MS + 1) * DAY_MS
    start = end - days * DAY_MS
    window = all_of(steps, int_range(schema, "ts", start, end))
    failed = all_of(window, term(schema, "ok", "false"))
    found = searcher.search(failed, limit=FAILURES_READ, order_by_field="ts")
    return Activity(
        firstDay=datetime.fromtimestamp(start / 1000, UTC).date().isoformat(),
        days=days,
        steps=count(searcher, window),
        flows=_flows(searcher, schema, window, failed, start, days),
        screens=_screens(searcher, schema, window, failed),
        targets=_targets(searcher, found.hits),
        failuresRead=len(found.hits),
        superseded=count(searcher, all_of(steps, term(schema, "superseded", "true"))),
    )


def _terms(searcher: tantivy.Searcher, field_name: str) -> list[str]:
    return [t for t, _ in searcher.terms_with_prefix(field_name, "", None, TERMS_READ)]


def _per_day(searcher: tantivy.Searcher, query: tantivy.Query, start: int, days: int) -> list[int]:
    """Matching documents per day of the window (a histogram of the `ts` fast field)."""
    bounds = {"min": start, "max": start + days * DAY_MS - 1}
    histogram = {"field": "ts", "interval": DAY_MS, "hard_bounds": bounds}
    buckets = searcher.aggregate(query, {"d": {"histogram": histogram}})["d"]["buckets"]
    per_day = [0] * days
    for bucket in buckets:
        index = (int(bucket["key"]) - start) // DAY_MS
        if 0 <= index < days:
            per_day[index] = int(bucket["doc_count"])
    return per_day


def _flows(
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    window: tantivy.Query,
    failed: tantivy.Query,
    start: int,
    days: int,
) -> list[FlowActivity]:
    totals = {
        flow: count(searcher, all_of(window, term(schema, "flow_tag", flow)))
        for flow in _terms(searcher, "flow_tag")
    }
    busiest = sorted((f for f in totals if totals[f]), key=lambda f: (-totals[f], f))
    return [
        FlowActivity(
            flow=flow,
            steps=_per_day(searcher, all_of(window, term(schema, "flow_tag", flow)), start, days),
            failed=_per_day(searcher, all_of(failed, term(schema, "flow_tag", flow)), start, days),
        )
        for flow in busiest[:TOP_FLOWS]
    ]


def _screens(
    searcher: tantivy.Searcher, schema: tantivy.Schema, window: tantivy.Query, failed: tantivy.Query
) -> list[ScreenFailures]:
    found = []
    for name in _terms(searcher, "screen_name"):
        on = term(schema, "screen_name", name)
        failures = count(searcher, all_of(failed, on))
        if failures:
            found.append(
                ScreenFailures(
                    screen=name, failed=failures, steps=count(searcher, all_of(window, on))
                )
            )
    return sorted(found, key=lambda s: (-s.failed, s.screen))[:TOP_SCREENS]


def _targets(
    searcher: tantivy.Searcher, hits: list[tuple[object, tantivy.DocAddress]]
) -> list[TargetFailures]:
    counts: Counter[tuple[str, str]] = Counter()
    for _, address in hits:
        payload = read_payload(searcher.doc(address))
        target = describe_target(payload.get("target"))
        if target:
            counts[(payload.get("screen") or "unknown", target)] += 1
    return [
        TargetFailures(screen=screen, target=target, failed=n)
        for (screen, target), n in counts.most_common(TOP_TARGETS)
    ]
