"""Secrets never reach the knowledge root or the index: one scrubber for every step record.

Knowledge is shared between agents and kept in plain files, so the password that unlocked a
wallet, the words of a secret recovery phrase or a private key must not be stored. The
recorders (`mm_knowledge_record_step`, the browser tools) scrub a record before writing it;
the indexer and the summaries scrub again what they read, for files written by others.

A step typed a secret when anything known about its target names one: the input's own
descriptive values (`inputType: "password"`, `label`, a nested `fill.selector`…), the target's
testId, selector, `a11yHint` role and name, the accessibility node its `a11yRef` resolves to
(in the record's own snapshot or an earlier one the caller passes), or `textRedacted: true`.
Each action of a `run_steps` batch is judged the same way, on its own target: its `ref` is
what the snapshot before the batch showed (else the batch's own snapshot).
A secret is then every typed text of the record (`text`, `value`, `keys` at any depth of
`tool.input` and of unknown fields such as `args`), every value under a key that names a
secret (`input.password`), and any typed text that looks like a recovery phrase (12-24 short
words, as a string or a list) or a private key (64 hex digits), whatever the target. Each
secret value is replaced by `[REDACTED]`, and every other copy of it in the record (an error
message, an observed testId's text, an a11y name) is cut out too. Observed text is a secret
itself when it looks like one, or when it is the value of an input whose testId names a secret.
A phrase shown a word per chip (MetaMask's reveal and confirm grids) is caught word by word: any
element whose testId names a secret and whose text is one lowercase word (`1. quokka`), and any
run of 12 or more accessibility nodes named that way, is a secret.
Over-redacting is the safe error, but a button's label ("Continue" on `import-srp-confirm`)
is knowledge, not a secret.
"""

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from engine.core import OBSERVATIONS_CACHED, ByIdentity
from engine.records.batches import entry_records
from engine.records.models import Observation, StepRecord

REDACTED = "[REDACTED]"
SECRET_WORDS = re.compile(
    r"passw|passphrase|secret|recovery|mnemonic|seed|private.?key|privkey", re.IGNORECASE
)
"""Words that name a secret anywhere in a description (`unlock-password`, `seedPhrase`)."""
SECRET_TOKENS = frozenset({"pwd", "pw", "pass", "srp", "otp"})
"""Short words that name a secret only as a whole word (`unlock-pwd`, not `spinner`)."""
TEXT_KEYS = frozenset({"text", "value", "keys"})
"""Keys of typed text (Playwright `fill`/`type`/`press` arguments and the recorders' copies)."""
REF_KEYS = ("a11yRef", "ref")
"""Arguments naming the accessibility node acted on (`ref` as a batch's actions say it)."""
FIELD_TAGS = frozenset({"input", "textarea"})
"""Observed elements whose text is a typed value (of a secret field, when the testId says so)."""
STRUCTURE_KEYS = frozenset(
    {"schemaVersion", "timestamp", "sessionId", "outcome", "observation", "labels", "recalled"}
)
"""Record fields written by the recorder itself, never typed text (scrubbed only of copies)."""
TOOL_KEYS = frozenset({"name", "target", "textRedacted", "textLength"})
MIN_COPY_CHARS = 4
"""Shorter secrets are cut only where a whole value equals them (a one-letter password must
not cut every `a` out of the record)."""
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_PHRASE_WORD = re.compile(r"[a-z]{3,8}")
_PHRASE_LENGTHS = frozenset({12, 15, 18, 21, 24})
_CHIP_WORD = re.compile(r"(?:\d{1,2}\s*[.):]?\s*)?[a-z]{3,8}")
"""One word of a phrase as a chip shows it, maybe numbered (`quokka`, `3. quokka`)."""
_NUMBER_ONLY = re.compile(r"\d{1,2}\s*[.):]?")
"""A chip's number rendered as its own node: it does not end a run of words."""
_PRIVATE_KEY = re.compile(r"(0x)?[0-9a-fA-F]{64}")
MIN_SECRET_CHARS = 12 * 3 + 11
"""The shortest recovery phrase (12 words of 3 letters); a private key is longer."""

RefNodes = Mapping[str, tuple[str, str]]
"""a11y ref -> (role, name) of an earlier snapshot, as the indexer's session context holds."""


def is_secret(description: str | None) -> bool:
    """Whether a field description (testId, selector, label, input type…) names a secret."""
    return bool(description) and _names_secret(description or "")


@lru_cache(maxsize=65_536)
def _names_secret(description: str) -> bool:
    """(cached: the same testIds, roles and tool names recur on every step)"""
    if SECRET_WORDS.search(description):
        return True
    return any(word.lower() in SECRET_TOKENS for word in _WORD.findall(description))


def looks_like_secret(text: str | list[Any]) -> bool:
    """A recovery phrase (12-24 lowercase words, as one string or a list) or a private key."""
    if isinstance(text, list):
        if not all(isinstance(word, str) for word in text):
            return False
        text = " ".join(text)
    if len(text) < MIN_SECRET_CHARS:
        return False
    words = text.split()
    if len(words) in _PHRASE_LENGTHS and all(_PHRASE_WORD.fullmatch(w) for w in words):
        return True
    return _PRIVATE_KEY.fullmatch(text.strip()) is not None


def _chip_words(observation: Observation) -> list[str]:
    """The words of a phrase shown a word per element: by testIds that name a secret, or as a
    run of at least 12 one-word accessibility nodes (fewer is a list, not a phrase)."""
    found = [
        item.text
        for item in observation.testIds
        if item.text and is_secret(item.testId) and _CHIP_WORD.fullmatch(item.text.strip())
    ]
    runs: list[list[str]] = [[]]
    for node in observation.a11y.nodes:
        name = node.name.strip()
        if _CHIP_WORD.fullmatch(name):
            runs[-1].append(node.name)
        elif name and not _NUMBER_ONLY.fullmatch(name):  # any other node ends a run
            runs.append([])
    found += [name for run in runs if len(run) >= min(_PHRASE_LENGTHS) for name in run]
    return found + [text.split()[-1].lstrip("0123456789.):") for text in found]


@lru_cache(maxsize=65_536)
def _looks_like_secret_text(text: str) -> bool:
    """`looks_like_secret` of observed text (cached: the same names are seen on every step)."""
    return looks_like_secret(text)


def _typed_places(record: StepRecord, batch: bool) -> Iterator[tuple[str, Any]]:
    """(key, value) of the parts of a record an agent typed into: `tool.input` (without a
    batch's list of steps, which are judged one by one) and unknown fields of the tool and the
    record (`args`, …)."""
    if record.tool.input:
        given = record.tool.input
        yield "input", {k: v for k, v in given.items() if k != "steps"} if batch else given
    for key, value in (record.tool.model_extra or {}).items():
        if key not in TOOL_KEYS:
            yield key, value
    for key, value in (record.model_extra or {}).items():
        if key not in STRUCTURE_KEYS:
            yield key, value


def _strings(
    key: str, value: Any, found: list[tuple[str, str | list[Any]]] | None = None
) -> list[tuple[str, str | list[Any]]]:
    """Every string (and list of strings) under `value`, with the key it sits under, in order
    (appended to `found`; a list, not a generator: this runs on every field of every step)."""
    found = [] if found is None else found
    if isinstance(value, str):
        found.append((key, value))
    elif isinstance(value, dict):
        for k, v in value.items():
            _strings(str(k), v, found)
    elif isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            found.append((key, value))
        else:
            for item in value:
                _strings(key, item, found)
    return found


def _target_descriptions(
    record: StepRecord, typed: list[tuple[str, str | list[Any]]], earlier: RefNodes
) -> Iterator[str]:
    """What the record knows about the element it acted on (never the typed text itself)."""
    yield record.tool.name
    yield from (text for key, text in typed if key not in TEXT_KEYS and isinstance(text, str))
    target = record.tool.target
    if target is not None:
        yield from (v for v in (target.testId, target.selector) if v)
        if target.a11yHint is not None:
            yield f"{target.a11yHint.role} {target.a11yHint.name}"
        for key, value in (target.model_extra or {}).items():
            yield from (text for _, text in _strings(key, value) if isinstance(text, str))
    for ref in _refs_named(record):
        nodes = [n for n in record.observation.a11y.nodes if n.ref == ref]
        for node in nodes:
            yield f"{node.role} {node.name}"
            yield from (v for v in (node.model_extra or {}).values() if isinstance(v, str))
        if not nodes and ref in earlier:
            yield " ".join(earlier[ref])


def _refs_named(record: StepRecord) -> set[str]:
    """The a11y refs a record acted on: its target's, and a `ref` or `a11yRef` among its
    arguments (an action of a batch whose tool is not known to take a target still names one)."""
    target = record.tool.target
    given = record.tool.input or {}
    refs = {v for k in REF_KEYS if isinstance(v := given.get(k), str) and v}
    if target is not None and target.a11yRef:
        refs.add(target.a11yRef)
    return refs


def unresolved_refs(record: StepRecord) -> set[str]:
    """The a11y refs `record` acted on that its own snapshot does not hold, which only an
    earlier snapshot can resolve (the caller's `earlier`): the target's, and every action's of a
    `run_steps` batch (`{"tool": "type", "args": {"ref": "e2"}}`)."""
    refs = _refs_named(record).union(*map(_refs_named, entry_records(record) or ()))
    return refs - {node.ref for node in record.observation.a11y.nodes}


def _flatten(value: str | list[Any]) -> list[str]:
    return [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]


def typed_secrets(record: StepRecord, earlier: RefNodes | None = None) -> list[str]:
    """The secret values typed in `record` (in record order, typed text first). Each entry of
    a batch is judged on its own target, as a step of its own would be (its `a11yRef` resolved
    by `_batch_refs`): a password typed in one step of a batch makes that step's text a secret,
    not the amount typed in another."""
    entries = entry_records(record)
    found: list[str] = []
    if entries:
        refs = _batch_refs(record.observation, earlier or {})
        found = [s for entry in entries for s in _typed_secrets(entry, refs)]
    found += _typed_secrets(record, earlier, batch=entries is not None)
    return [s for s in dict.fromkeys(found) if s and s != REDACTED]


def _batch_refs(observation: Observation, earlier: RefNodes) -> RefNodes:
    """What the refs of a batch's actions name: the snapshot before the batch (what the agent
    chose its refs from) first, then the batch's own, taken after its last action, for refs the
    earlier one lacks. An action has no snapshot of its own; without this, a password typed by
    ref inside a batch would be judged on nothing."""
    own = {node.ref: (node.role, node.name) for node in observation.a11y.nodes}
    return {**own, **earlier} if own else earlier


def _typed_secrets(record: StepRecord, earlier: RefNodes | None, batch: bool = False) -> list[str]:
    """`typed_secrets` of one record, a batch's steps left to the caller (`batch`)."""
    typed: list[tuple[str, str | list[Any]]] = []
    for key, value in _typed_places(record, batch):
        _strings(key, value, typed)
    # Whether the target names a secret is asked only of a record that typed text (most
    # records typed none: a click, a look at the screen).
    texts_typed = any(key in TEXT_KEYS for key, _ in typed)
    secret_target = texts_typed and (
        bool(record.tool.textRedacted)
        or any(map(is_secret, _target_descriptions(record, typed, earlier or {})))
    )
    found: list[str] = []
    for key, text in typed:
        if is_secret(key) or (key in TEXT_KEYS and (secret_target or looks_like_secret(text))):
            found += _flatten(text)
        elif isinstance(text, str) and looks_like_secret(text):
            found.append(text)
    return found + _shown_secrets(record.observation)


def _secrets_shown(observation: Observation) -> list[str]:
    """The secrets an observation shows (in a secret field, as a phrase or key, word by word)."""
    found = []
    for item in observation.testIds:
        field = item.tag in FIELD_TAGS and is_secret(item.testId)
        if item.text and (field or _looks_like_secret_text(item.text)):
            found.append(item.text)
    found += [n.name for n in observation.a11y.nodes if _looks_like_secret_text(n.name)]
    return found + _chip_words(observation)


_shown_secrets = ByIdentity(_secrets_shown, OBSERVATIONS_CACHED)
"""(derived once per parsed observation: records share them, `knowledge_root.parse_step`)"""


def _scrub(value: Any, secrets: list[str]) -> Any:
    """`value` with every secret (and every copy inside a longer text) replaced."""
    if isinstance(value, str):
        if value in secrets:
            return REDACTED
        for secret in secrets:
            if len(secret) >= MIN_COPY_CHARS and secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    return value


def _typed_length(record: StepRecord) -> int | None:
    """The length of the text typed into the field (what `textLength` reports)."""
    text = (record.tool.input or {}).get("text")
    if isinstance(text, str) and text != REDACTED:
        return len(text)
    return record.tool.textLength


def scrub_step(record: StepRecord, earlier: RefNodes | None = None) -> StepRecord:
    """`record` with every secret and every copy of one replaced by `[REDACTED]`; the same
    object when it holds none. `earlier` resolves an `a11yRef` missing from the record's own
    snapshot (the refs of the session's latest snapshot before the step)."""
    secrets = typed_secrets(record, earlier)
    if not secrets:
        return record
    secrets.sort(key=len, reverse=True)  # a longer secret first: its parts stay inside it
    data = _scrub(record.model_dump(mode="json", exclude_none=True), secrets)
    typed = {s for _, value in _strings("input", record.tool.input or {}) for s in _flatten(value)}
    if record.tool.textRedacted or not typed.isdisjoint(secrets):
        data["tool"]["textRedacted"] = True
        length = _typed_length(record)
        if length is not None:
            data["tool"]["textLength"] = length
    return StepRecord.model_validate(data)
