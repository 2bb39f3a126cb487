"""Typed results of the knowledge operations (what CLI `--json` and MCP tools return)."""

from typing import Any

from pydantic import BaseModel, Field


class Result(BaseModel):
    """Result models serialise with their camelCase names and without empty optionals."""

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class SourceSession(Result):
    """The session a step was recorded in (spec 002's session context on every result)."""

    id: str
    createdAt: str
    goal: str | None = None
    flowTags: list[str] = Field(default_factory=list)
    stepCount: int = 0


class SupersededByStep(Result):
    stepId: str
    target: str | None = None
    timestamp: str | None = None


class BatchAction(Result):
    """One action of a batch step (`run_steps`), at its position in the batch."""

    index: int
    tool: str
    target: dict[str, str] | None = None
    screen: str | None = None
    """The screen it was taken on; None when the record cannot tell."""
    outcome: str
    """`ok`; `failed`; or `unknown`: the batch failed, and its record does not say where."""


class Caution(Result):
    """Why to look twice before acting on a remembered target (`engine.history.caution`)."""

    reasons: list[str]
    """`name` (the element shows another name now than the one it was remembered under)
    and/or `destructive` (it looks destructive and the goal or query does not ask for that)."""
    message: str
    """knowhow's own words for the reasons (never recorded text)."""


class StepSummary(Result):
    """SPEC-03 KnowledgeStepSummary plus ids, outcome and score; lifecycle fields (spec 002):
    `isSuperseded` (with `supersededBy`, `supersededAt`) and `sourceSession`."""

    stepId: str
    sessionId: str
    timestamp: str
    tool: str
    screen: str
    onScreen: str | None = None
    """The screen the action was taken on, when it is not `screen` (where the step ended):
    match evidence names it (`screen:confirm-transaction` on a step that ended on `home`)."""
    snippet: str
    ok: bool
    target: dict[str, str] | None = None
    labels: list[str] = Field(default_factory=list)
    matchedFields: list[str] | None = None
    sessionGoal: str | None = None
    score: float | None = None
    isSuperseded: bool | None = None
    supersededBy: SupersededByStep | None = None
    supersededAt: str | None = None
    supersededReason: str | None = None
    sourceSession: SourceSession | None = None
    recallCount: int | None = None
    """Search results: how many later sessions followed this step and it worked."""
    batch: list[BatchAction] | None = None
    """A batch step's actions, in order (`matchedFields` name one as `batch[2].…`); a search
    result lists some of them only (`batchCount`)."""
    batchCount: int | None = None
    """How many actions the batch holds, when `batch` lists fewer (`engine.search.answer_size`)."""
    context: str | None = None
    """`e2e` or `prod`: what today's recorder ran the step against, when it says."""
    salience: float | None = None
    """Search results: 0..1 from those recalls, fading with their age (engine.query.salience)."""
    type: str | None = None
    """`step` (an action) or `screen` (an observation); on search results."""
    similarity: float | None = None
    """Cosine of the query to the step's texts (0..1), in hybrid and semantic mode."""
    matchType: str | None = None
    """`keyword`, `semantic` or `both`; on search results."""
    relatedCount: int | None = None
    """Search results: how many other current memories share its duplicate group."""
    confidence: float | None = None
    """Search results: how surely it answers the query, comparable across queries (0..1; 1.0:
    it holds every concept of the query or the identifier typed; a match by meaning alone at
    most `engine.query.coverage.MEANING_AT_MOST`, less when no step holds some concept)."""
    caution: Caution | None = None
    """Search results: why to look twice before acting on its target; such a result ranks
    below those without one."""


class SessionMemory(Result):
    """A session search result (`types: ["session"]`): a workflow memory — the session, the
    steps of it that matched (best first) and its recipe (the screens it went through and its
    first actions that worked)."""

    type: str = "session"
    sessionId: str
    session: SourceSession
    score: float
    """The score of its best matching step (the session's rank)."""
    confidence: float | None = None
    """Its best matching step's confidence (`StepSummary.confidence`)."""
    similarity: float | None = None
    matchType: str
    matchedSteps: list[str]
    screens: list[str]
    actions: list["RecipeAction"]
    truncated: bool | None = None
    """The recipe was read from the session's first steps only (a long session): summarize
    the session for all of it, page by page."""


class SearchCoverage(Result):
    """Which concepts of a query (words, expressions, whole identifiers, as typed) some step
    within the search's scope and filters holds, by its words or their stems, synonyms, glossary
    translations, spellings, typo corrections or completions, and which none does. Words that
    only shape the question (`how`, `my`, `of`) are in no list."""

    covered: list[str]
    uncovered: list[str]
    byMeaning: list[str] = Field(default_factory=list)
    """Words no step holds that the results shown match by meaning: the whole query is near
    enough to them (`engine.query.coverage.MEANING_FLOOR`) to read the word as said
    differently, not as something nobody recorded. Never an identifier."""


class KnownValues(Result):
    """What an empty search can try instead: values the index holds, each checked and bounded
    (`engine.search.step_search.known_values`). Recorded text is data here, never part of a
    sentence knowhow writes (`hint`)."""

    flowTags: list[str]
    screens: list[str]
    phrases: list[str] = Field(default_factory=list)
    """The recorded actions nearest the query's meaning, when it was embedded."""


class SearchPage(Result):
    query: str
    total: int
    offset: int
    limit: int
    hasMore: bool
    results: list[StepSummary] | list[SessionMemory]
    """Steps and screens, or sessions when the search asked for `types: ["session"]`."""
    nextOffset: int | None = None
    """The `offset` of the next page while `hasMore`: `offset` plus the results listed, fewer
    than `limit` when the page reached its size bound (`engine.search.answer_size`)."""
    coverage: SearchCoverage | None = None
    hint: str | None = None
    """What the answer lacks, in a sentence: the concepts no step holds (an identifier first);
    knowhow's own words and the query's, never recorded text (what the index knows instead
    of an empty answer is in `known`)."""
    known: KnownValues | None = None
    mode: str | None = None
    modeUsed: str | None = None
    degraded: str | None = None
    """Why the search could not use the mode asked for (model missing, corrupt, …)."""

    def steps(self) -> list[StepSummary]:
        """The step and screen rows (none on a page of sessions)."""
        return [row for row in self.results if isinstance(row, StepSummary)]

    def sessions(self) -> list[SessionMemory]:
        """The session rows (`types: ["session"]`)."""
        return [row for row in self.results if isinstance(row, SessionMemory)]


class StepList(Result):
    total: int
    steps: list[StepSummary]
    hint: str | None = None
    """Why nothing came back when the scope names a session that does not exist."""


class SessionSummary(Result):
    sessionId: str
    createdAt: str
    goal: str | None = None
    flowTags: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    git: dict[str, Any] | None = None
    stepCount: int = 0
    failedStepCount: int = 0
    hasMetadata: bool = True
    stateMode: str | None = None
    """How today's recorder launched the wallet: default, onboarding or custom state."""
    fixturePreset: str | None = None


class SessionList(Result):
    total: int
    sessions: list[SessionSummary]


class RecipeAction(Result):
    stepId: str
    tool: str
    screen: str
    target: str | None = None
    text: str | None = None
    batchIndex: int | None = None
    """Its position in its batch, when the step is a batch (`run_steps`)."""


class RecipeFailure(Result):
    stepId: str
    tool: str
    screen: str
    target: str | None = None
    errorCode: str | None = None
    errorMessage: str | None = None
    recoveredBy: RecipeAction | None = None
    batch: list[RecipeAction] | None = None
    """A failed batch's actions, none of them known to have worked or failed (see `note`)."""
    note: str | None = None


class SessionRecipe(Result):
    """How a session went: where it went, what worked, what failed and how it recovered."""

    session: SessionSummary
    screens: list[str]
    actions: list[RecipeAction]
    failures: list[RecipeFailure]
    skipped: list[dict[str, str]] = Field(default_factory=list)
    warnings: list[dict[str, str]] = Field(default_factory=list)
    """Files read only in part, and what of them was left out."""
    offset: int = 0
    """The first step of this page."""
    truncated: bool | None = None
    """The recipe covers one page of a long session's steps, not all of them."""
    nextOffset: int | None = None
    """Where the next page starts (summarize again with this `offset`); None on the last."""


class DuplicateGroup(Result):
    """Near-identical memories of one type: one text and the texts within the threshold of it."""

    type: str
    count: int
    """Memories in the group (steps, screen observations or sessions)."""
    text: str | None
    """The group's most common text (None for a store that did not keep its texts)."""
    variants: list[str] = Field(default_factory=list)
    """Other texts of the group, most common first (at most a few)."""
    distinctTexts: int
    minSimilarity: float
    """Lowest cosine of a text of the group to `text` (1.0: identical texts only)."""
    examples: list[str]
    """Ids of a few of its memories: the newest steps, or the sessions with most such steps."""


class DuplicateList(Result):
    similarityThreshold: float
    types: list[str]
    memories: int
    """Memories considered (with a text, passing the filters)."""
    total: int
    """Groups of two or more memories."""
    hasMore: bool
    groups: list[DuplicateGroup]
    degraded: str | None = None
    """Why only identical texts could be grouped (no vectors of the model)."""


class Cluster(Result):
    size: int
    """Memories in the cluster."""
    distinctTexts: int
    topTerms: list[str]
    """Words that set the cluster apart (frequent in it, rarer elsewhere)."""
    text: str | None
    """The text nearest the cluster's centre."""
    examples: list[str]
    """Ids of memories with the texts nearest the centre."""


class ClusterList(Result):
    type: str
    nClusters: int
    memories: int
    clusters: list[Cluster]
    hint: str | None = None
    """Why fewer clusters than asked came back (fewer distinct texts than nClusters)."""
    degraded: str | None = None
