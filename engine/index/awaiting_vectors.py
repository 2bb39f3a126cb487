"""Texts of a generation still without vectors, kept until a writer can embed them.

A writer whose embedding model cannot load (a damaged or missing model file) still indexes new
steps, for keyword search; their texts used to be dropped, so their vectors were never made,
not even by a healthy writer taking over later, and nothing said they were missing. Now such a
commit keeps them in `vectors.awaiting.json` in the generation (with the pooled vectors made of
them), every later commit embeds them with its own texts once the model loads (a writer taking
the lease commits at once when the file exists), and readers count them for status (`degraded`).
"""

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from engine.core import atomic_write
from engine.embedding import Pooled

AWAITING_FILE = "vectors.awaiting.json"


@dataclass
class Awaiting:
    texts: dict[str, str] = field(default_factory=dict)
    """key -> text still to embed."""
    pooled: dict[str, Pooled] = field(default_factory=dict)
    """key -> pooled vector still to make (some of its parts are awaiting)."""

    def __len__(self) -> int:
        return len(self.texts) + len(self.pooled)


def read_awaiting(generation: Path) -> Awaiting:
    """What the generation still awaits (nothing when the file is missing or unreadable: a
    damaged list loses no knowledge, `knowhow reindex` embeds every text again)."""
    try:
        data = orjson.loads((generation / AWAITING_FILE).read_bytes())
        texts = {str(k): str(v) for k, v in data["texts"].items()}
        pooled = {
            str(k): Pooled(str(v["text"]), tuple(map(str, v["parts"])))
            for k, v in data["pooled"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return Awaiting()
    return Awaiting(texts, pooled)


def write_awaiting(generation: Path, awaiting: Awaiting) -> None:
    """Keep `awaiting` (atomically), or remove the file when nothing awaits."""
    path = generation / AWAITING_FILE
    if not awaiting:
        path.unlink(missing_ok=True)
        return
    pooled = {k: {"text": p.text, "parts": list(p.parts)} for k, p in awaiting.pooled.items()}
    atomic_write(path, orjson.dumps({"texts": awaiting.texts, "pooled": pooled}))
