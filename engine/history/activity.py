"""Where flows break, counted from the index alone: the web page's charts.

Nothing here reads a step file, and nearly nothing reads a stored document. Every count is a
histogram aggregation of the `ts` fast field bounded to the window (columnar: no document is
read), of all steps, of each flow's and of each screen's, failed or not; the flows and screens are
the terms of the `flow_tag` and `screen_name` fields, and superseded steps are counted by their
flag. Only two things read stored payloads: the targets that fail most (those of the latest
`FAILURES_READ` failed steps) and the days steps were superseded on (those of the latest
superseded steps). The window is the `days` days up to the newest step's day, so an index of old
recordings still shows its activity.
"""

from collections import Counter
from datetime import UTC, datetime

import tantivy

from engine.core import Result
from engine.index import DOC_STEP, all_of, count, read_payload, term
from engine.query import describe_target

DAY_MS = 86_400_000
DAYS = 60
TOP_FLOWS = 8
TOP_SCREENS = 12
TOP_TARGETS = 12
FAILURES_READ = 2_000
"""Latest failed steps whose payloads are read for the failing targets, and latest superseded
steps whose payloads say when they were superseded."""
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


class DayCount(Result):
    day: str
    count: int


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
    supersededDays: list[DayCount]
    """How many steps were superseded on each day (of the latest `FAILURES_READ` superseded
    steps), oldest day first."""


def count_activity(
    searcher: tantivy.Searcher, schema: tantivy.Schema, days: int = DAYS
) -> Activity | None:
    """The index's activity over `days` days up to its newest step; None when it holds none."""
    steps = term(schema, "doc_type", DOC_STEP)
    newest = searcher.search(steps, limit=1, order_by_field="ts")
    if not newest.hits:
        return None
    last_ts = int(searcher.doc(newest.hits[0][1]).get_first("ts") or 0)
    start = (last_ts // DAY_MS + 1 - days) * DAY_MS
    window = Window(searcher, start, days)
    failed = all_of(steps, term(schema, "ok", "false"))
    found = searcher.search(failed, limit=FAILURES_READ, order_by_field="ts")
    superseded = all_of(steps, term(schema, "superseded", "true"))
    return Activity(
        firstDay=datetime.fromtimestamp(start / 1000, UTC).date().isoformat(),
        days=days,
        steps=sum(window.per_day(steps)),
        flows=_flows(window, schema, steps, failed),
        screens=_screens(window, schema, steps, failed),
        targets=_targets(searcher, found.hits),
        failuresRead=len(found.hits),
        superseded=count(searcher, superseded),
        supersededDays=_superseded_days(searcher, superseded),
    )


class Window:
    """The days counted. A query is counted per day by a histogram aggregation of the `ts` fast
    field bounded to the window (columnar), never with a range clause: intersecting a range
    query costs more than the whole histogram."""

    def __init__(self, searcher: tantivy.Searcher, start: int, days: int) -> None:
        self.searcher = searcher
        self.start = start
        self.days = days

    def per_day(self, query: tantivy.Query) -> list[int]:
        bounds = {"min": self.start, "max": self.start + self.days * DAY_MS - 1}
        histogram = {"field": "ts", "interval": DAY_MS, "hard_bounds": bounds}
        buckets = self.searcher.aggregate(query, {"d": {"histogram": histogram}})["d"]["buckets"]
        per_day = [0] * self.days
        for bucket in buckets:
            index = (int(bucket["key"]) - self.start) // DAY_MS
            if 0 <= index < self.days:
                per_day[index] = int(bucket["doc_count"])
        return per_day

    def terms(self, field_name: str) -> list[str]:
        """The values of a raw field (flows, screens) the index holds."""
        return [t for t, _ in self.searcher.terms_with_prefix(field_name, "", None, TERMS_READ)]


def _flows(
    window: Window, schema: tantivy.Schema, steps: tantivy.Query, failed: tantivy.Query
) -> list[FlowActivity]:
    """The flows with the most steps in the window, each with its failed steps per day."""
    per_flow = {
        flow: window.per_day(all_of(steps, term(schema, "flow_tag", flow)))
        for flow in window.terms("flow_tag")
    }
    busiest = sorted(
        (f for f in per_flow if any(per_flow[f])), key=lambda f: (-sum(per_flow[f]), f)
    )
    return [
        FlowActivity(
            flow=flow,
            steps=per_flow[flow],
            failed=window.per_day(all_of(failed, term(schema, "flow_tag", flow))),
        )
        for flow in busiest[:TOP_FLOWS]
    ]


def _screens(
    window: Window, schema: tantivy.Schema, steps: tantivy.Query, failed: tantivy.Query
) -> list[ScreenFailures]:
    """The screens with the most failed steps in the window, with all their steps there."""
    failures = {
        name: sum(window.per_day(all_of(failed, term(schema, "screen_name", name))))
        for name in window.terms("screen_name")
    }
    worst = sorted((s for s in failures if failures[s]), key=lambda s: (-failures[s], s))
    return [
        ScreenFailures(
            screen=name,
            failed=failures[name],
            steps=sum(window.per_day(all_of(steps, term(schema, "screen_name", name)))),
        )
        for name in worst[:TOP_SCREENS]
    ]


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


def _superseded_days(searcher: tantivy.Searcher, superseded: tantivy.Query) -> list[DayCount]:
    """The days the latest superseded steps were superseded on (their payloads say when)."""
    found = searcher.search(superseded, limit=FAILURES_READ, order_by_field="ts")
    days: Counter[str] = Counter()
    for _, address in found.hits:
        at = read_payload(searcher.doc(address)).get("supersededAt")
        if at:
            days[at[:10]] += 1
    return [DayCount(day=day, count=n) for day, n in sorted(days.items())]
