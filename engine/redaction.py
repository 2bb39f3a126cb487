"""Secrets never reach the knowledge root: text typed into password or recovery-phrase fields.

Knowledge is shared between agents and kept in plain files, so the password that unlocked a
wallet or the words of a secret recovery phrase must not be stored. A step is a secret entry
when anything that names the field it typed into — the input's own descriptive keys
(`inputType`, `label`, `name`, …), the target's testId or selector, or the accessible name of
the a11y ref — mentions password, passphrase, srp, secret, recovery, mnemonic or seed. Its
`input.text` (and `input.value`) become `[REDACTED]`, with `textRedacted: true` and the
original `textLength`, as the TypeScript recorder writes them. Over-redacting is the safe error.
"""

import re
from collections.abc import Iterator

from engine.models import StepRecord

REDACTED = "[REDACTED]"
SECRET_WORDS = re.compile(r"passw|passphrase|srp|secret|recovery|mnemonic|seed", re.I)
TEXT_KEYS = ("text", "value")


def is_secret(description: str | None) -> bool:
    """Whether a field description (testId, selector, label, input type…) names a secret."""
    return bool(description) and SECRET_WORDS.search(description or "") is not None


def field_descriptions(record: StepRecord) -> Iterator[str]:
    """Everything that describes the field a step typed into (never the typed text itself)."""
    tool = record.tool
    for key, value in (tool.input or {}).items():
        if key not in TEXT_KEYS and isinstance(value, str):
            yield value
    target = tool.target
    if target is None:
        return
    yield from (v for v in (target.testId, target.selector) if v)
    if target.a11yRef:
        for node in record.observation.a11y.nodes:
            if node.ref == target.a11yRef:
                yield f"{node.role} {node.name}"


def redact_step(record: StepRecord) -> StepRecord:
    """`record` with secret typed text replaced by `[REDACTED]`; the same object otherwise."""
    data = dict(record.tool.input or {})
    texts = {k: v for k in TEXT_KEYS if isinstance(v := data.get(k), str) and v != REDACTED}
    if not texts:
        return record
    if not (record.tool.textRedacted or any(map(is_secret, field_descriptions(record)))):
        return record
    length = len(texts.get("text", next(iter(texts.values()))))
    data.update(dict.fromkeys(texts, REDACTED))
    tool = record.tool.model_copy(
        update={"input": data, "textRedacted": True, "textLength": length}
    )
    return record.model_copy(update={"tool": tool})
