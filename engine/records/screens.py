"""Screen detection: which screen a URL and the visible testIds show (SPEC-04 §2.2).

URL rules first (regular expressions searched in the full URL, in order), then testId-presence
rules, then a name derived from the hash route (`#/onboarding/welcome` -> `onboarding-welcome`),
and `unknown` only when nothing applies. Rules are per app, loaded from JSON; the defaults are
MetaMask's. Used when recording, and when indexing old records that said `unknown`.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import orjson

UNKNOWN = "unknown"
DEFAULT_RULES_FILE = Path(__file__).parents[1] / "rules" / "metamask.json"
_ID_SEGMENT = re.compile(r"^(0x[0-9a-f]+|[0-9a-f-]{8,}|\d+)$", re.IGNORECASE)


@dataclass(frozen=True)
class ScreenRules:
    url: tuple[tuple[re.Pattern[str], str], ...]
    test_ids: tuple[tuple[str, str], ...]

    @classmethod
    def from_json(cls, data: bytes | str) -> "ScreenRules":
        """`{"url": [[regex, screen], ...], "testIds": [[testId, screen], ...]}`."""
        parsed = orjson.loads(data)
        try:
            url = tuple((re.compile(p), str(s)) for p, s in parsed.get("url", []))
            test_ids = tuple((str(t), str(s)) for t, s in parsed.get("testIds", []))
        except (TypeError, ValueError, re.error) as exc:
            raise ValueError(f"invalid screen rules: {exc}") from exc
        return cls(url, test_ids)

    def detect(self, url: str | None, test_ids: Iterable[str] = ()) -> str:
        if url:
            for pattern, screen in self.url:
                if pattern.search(url):
                    return screen
        present = set(test_ids)
        for test_id, screen in self.test_ids:
            if test_id in present:
                return screen
        return route_screen(url)


def route_screen(url: str | None) -> str:
    """A screen name from the hash route: `…#/settings/advanced` -> `settings-advanced`."""
    if not url or "#" not in url:
        return UNKNOWN
    route = url.split("#", 1)[1].split("?", 1)[0]
    segments = [s.lower() for s in route.split("/") if s and not _ID_SEGMENT.match(s)]
    return "-".join(segments[:3]) or UNKNOWN


@lru_cache(maxsize=1)
def default_rules() -> ScreenRules:
    return ScreenRules.from_json(DEFAULT_RULES_FILE.read_bytes())
