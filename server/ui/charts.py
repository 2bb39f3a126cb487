"""The charts page: where flows break, from the index's own fields, drawn as inline SVG.

Nothing here reads a step file. Steps per day come from a histogram aggregation of the `ts`
fast field (columnar: no document is read), one per flow and outcome; the flows and screens are
the terms of the `flow_tag` and `screen_name` fields; the targets that fail most are read from the
stored payloads of the latest failed steps only (`FAILURES_READ`); renames come from the live
generation's `renames.json` and superseded steps are counted by their flag. The geometry (bar
positions and heights) is computed here and the template only places it, so the page needs no
script and no chart library.
"""

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

import tantivy

from engine.index import DOC_STEP, all_of, count, int_range, read_payload, term
from engine.index.renamed_ids import RenamedId, load_renames, rename_map
from engine.query import describe_target
from server.state import ServerState

DAY_MS = 86_400_000
DAYS = 60
"""Days the charts cover, ending with the day of the newest step."""
TOP_FLOWS = 8
TOP_SCREENS = 12
TOP_TARGETS = 12
FAILURES_READ = 2_000
"""Latest failed steps whose payloads are read for the failing targets."""
TERMS_READ = 500
"""Flows and screens considered (the index's terms, in byte order)."""
WIDTH = 720
"""Width of a chart's plot area (SVG user units; it scales with the page)."""
ROW_HEIGHT = 46


@dataclass
class Bar:
    x: float
    width: float
    height: float
    failed_height: float
    day: str
    steps: int
    failed: int


@dataclass
class FlowRow:
    """One flow's steps per day (failed part in its own colour)."""

    flow: str
    steps: int
    failed: int
    bars: list[Bar]

    @property
    def rate(self) -> float:
        return self.failed / self.steps if self.steps else 0.0


@dataclass
class Share:
    """A horizontal bar: `value` of `total` (a rate) or a count scaled to the largest."""

    label: str
    value: int
    total: int
    width: float


@dataclass
class Charts:
    first_day: str
    last_day: str
    steps: int
    flows: list[FlowRow] = field(default_factory=list)
    screens: list[Share] = field(default_factory=list)
    targets: list[Share] = field(default_factory=list)
    renamed: list[RenamedId] = field(default_factory=list)
    superseded: int = 0


async def charts(state: ServerState) -> Charts | None:
    """The charts of the live generation; None when it holds no step."""
    return await state.query(lambda: _charts(state))


def _charts(state: ServerState) -> Charts | None:
    reader = state.engine.reader
    searcher, schema = reader.searcher(), reader.schema
    steps = term(schema, "doc_type", DOC_STEP)
    newest = searcher.search(steps, limit=1, order_by_field="ts")
    if not newest.hits:
        return None
    last_ts = int(searcher.doc(newest.hits[0][1]).get_first("ts") or 0)
    end = (last_ts // DAY_MS + 1) * DAY_MS
    start = end - DAYS * DAY_MS
    window = all_of(steps, int_range(schema, "ts", start, end))
    failed = all_of(window, term(schema, "ok", "false"))
    renames = rename_map(load_renames(reader.path) or [])
    return Charts(
        first_day=_day(start),
        last_day=_day(end - DAY_MS),
        steps=count(searcher, window),
        flows=_flows(searcher, schema, window, failed, start),
        screens=_screens(searcher, schema, window, failed),
        targets=_targets(searcher, failed),
        renamed=sorted((r for ids in renames.values() for r in ids), key=lambda r: r.since),
        superseded=count(searcher, all_of(steps, term(schema, "superseded", "true"))),
    )


def _day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()


def _terms(searcher: tantivy.Searcher, field_name: str) -> list[str]:
    return [t for t, _ in searcher.terms_with_prefix(field_name, "", None, TERMS_READ)]


def _per_day(searcher: tantivy.Searcher, query: tantivy.Query, start: int) -> list[int]:
    """Matching documents per day of the window (a histogram of the `ts` fast field)."""
    bounds = {"min": start, "max": start + DAYS * DAY_MS - 1}
    histogram = {"field": "ts", "interval": DAY_MS, "hard_bounds": bounds}
    buckets = searcher.aggregate(query, {"d": {"histogram": histogram}})["d"]["buckets"]
    days = [0] * DAYS
    for bucket in buckets:
        index = (int(bucket["key"]) - start) // DAY_MS
        if 0 <= index < DAYS:
            days[index] = int(bucket["doc_count"])
    return days


def _flows(
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    window: tantivy.Query,
    failed: tantivy.Query,
    start: int,
) -> list[FlowRow]:
    """The busiest flows' steps per day, on one scale (the busiest day of any of them)."""
    flows = _terms(searcher, "flow_tag")
    totals = {f: count(searcher, all_of(window, term(schema, "flow_tag", f))) for f in flows}
    busiest = sorted((f for f in totals if totals[f]), key=lambda f: (-totals[f], f))[:TOP_FLOWS]
    rows = []
    for flow in busiest:
        tagged = term(schema, "flow_tag", flow)
        per_day = _per_day(searcher, all_of(window, tagged), start)
        failed_per_day = _per_day(searcher, all_of(failed, tagged), start)
        rows.append((flow, per_day, failed_per_day))
    peak = max((max(days) for _, days, _ in rows), default=0) or 1
    step = WIDTH / DAYS
    return [
        FlowRow(
            flow,
            sum(days),
            sum(fails),
            [
                Bar(
                    x=i * step,
                    width=max(step - 1, 1),
                    height=ROW_HEIGHT * n / peak,
                    failed_height=ROW_HEIGHT * f / peak,
                    day=_day(start + i * DAY_MS),
                    steps=n,
                    failed=f,
                )
                for i, (n, f) in enumerate(zip(days, fails, strict=True))
                if n
            ],
        )
        for flow, days, fails in rows
    ]


def _screens(
    searcher: tantivy.Searcher, schema: tantivy.Schema, window: tantivy.Query, failed: tantivy.Query
) -> list[Share]:
    """The screens with the most failed steps, each with its failure rate."""
    shares = []
    for name in _terms(searcher, "screen_name"):
        on = term(schema, "screen_name", name)
        failures = count(searcher, all_of(failed, on))
        if failures:
            total = count(searcher, all_of(window, on))
            shares.append(Share(name, failures, total, WIDTH / 2 * failures / max(total, 1)))
    return sorted(shares, key=lambda s: (-s.value, s.label))[:TOP_SCREENS]


def _targets(searcher: tantivy.Searcher, failed: tantivy.Query) -> list[Share]:
    """The targets of the latest failed steps, most often failed first."""
    found = searcher.search(failed, limit=FAILURES_READ, order_by_field="ts")
    counts: Counter[str] = Counter()
    for _, address in found.hits:
        payload = read_payload(searcher.doc(address))
        target = payload.get("target")
        if target:
            counts[f"{payload.get('screen', '?')} · {describe_target(target)}"] += 1
    top = counts.most_common(TOP_TARGETS)
    peak = max((n for _, n in top), default=1)
    return [Share(label, n, len(found.hits), WIDTH / 2 * n / peak) for label, n in top]
