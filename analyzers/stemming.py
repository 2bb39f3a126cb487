"""A light English stemmer: plurals, -ing/-ed, -ation/-ion/-ate, and a final -e.

Why not Porter/Snowball: they over-stem UI vocabulary (`settings` -> `set`, which then meets
"set slippage"). Agents need `sending`/`sends`/`send`, `swaps`/`swap`, `confirmation`/`confirm`
and `connection`/`connect` to meet; every rule keeps a stem of at least 4 letters.
Applied to every word part on both the index and the query side, so only consistency matters.
"""

from functools import lru_cache

_VOWELS = frozenset("aeiouy")
_UNDOUBLE_KEEP = frozenset("lsz")


def _has_vowel(text: str) -> bool:
    return any(ch in _VOWELS for ch in text)


def _strip_suffix(word: str, suffix: str) -> str | None:
    """Remove -ing/-ed when a real stem of at least 4 letters remains (`sending` -> `send`)."""
    if not word.endswith(suffix):
        return None
    base = word[: -len(suffix)]
    if not _has_vowel(base):
        return None
    if len(base) >= 2 and base[-1] == base[-2] and base[-1] not in _VOWELS | _UNDOUBLE_KEEP:
        base = base[:-1]  # stopped -> stop, swapped -> swap
    if len(base) >= 7 and base.endswith("at"):
        base += "e"  # navigated -> navigate, so that -ate is stripped like in navigate
    return base if len(base) >= 4 else None


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """Stem one lowercase word; words of 3 letters or fewer, or with digits, are left alone."""
    if len(word) <= 3 or not word.isalpha() or not word.isascii():
        return word
    w = word
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses") or w.endswith(("ches", "shes", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    for suffix in ("ing", "ed"):
        stripped = _strip_suffix(w, suffix)
        if stripped is not None:
            w = stripped
            break
    w = _strip_derivation(w)
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


def _strip_derivation(word: str) -> str:
    """confirmation -> confirm, connection -> connect, navigate/navigation -> navig."""
    for suffix, keep_after in (("ation", ""), ("ion", "ts"), ("ate", "")):
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if len(base) >= 4 and (not keep_after or base[-1] in keep_after):
                return base
    return word
