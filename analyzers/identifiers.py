"""Identifier splitting for testIds, selectors, tool and screen names (SPEC-03 FR-7).

`coin-overview-send`, `send_token_btn`, `sendTokenButton`, `sendETHButton` and `ABBRevCase` all
split into their words; the whole identifier is kept as an extra token so that an exact
identifier outranks a step that merely shares its parts.
"""

from analyzers.stopwords import is_searchable
from analyzers.text import lower_chars


def _kind(ch: str) -> str:
    if not ch.isalnum():
        return "sep"
    if ch.isdecimal() or (ch.isdigit() and not ch.isalpha()):
        return "digit"
    if ch.isupper():
        return "upper"
    return "lower"  # lowercase, titlecase-less scripts (CJK, ...), other letters


def split_identifier(identifier: str | None) -> list[str]:
    """All word parts of an identifier, lowercased, in order; nothing is filtered out.

    Joined, the parts are exactly the identifier's letters and digits (lowercased one by one).

    >>> split_identifier("coin-overview_sendETHButton2")
    ['coin', 'overview', 'send', 'eth', 'button', '2']
    """
    if not identifier:
        return []
    parts: list[str] = []
    current: list[str] = []
    kinds = [_kind(ch) for ch in identifier]
    for i, ch in enumerate(identifier):
        kind = kinds[i]
        if kind == "sep":
            if current:
                parts.append("".join(current))
                current = []
            continue
        if current:
            prev = kinds[i - 1]
            nxt = kinds[i + 1] if i + 1 < len(identifier) else "sep"
            boundary = (
                (prev == "digit") != (kind == "digit")  # letters <-> digits
                or (prev == "lower" and kind == "upper")  # camelCase
                or (
                    prev == "upper" and kind == "upper" and nxt == "lower"
                )  # ABBRevCase, HTMLParser
            )
            if boundary:
                parts.append("".join(current))
                current = []
        current.append(ch)
    if current:
        parts.append("".join(current))
    return [lower_chars(p) for p in parts]


def tokenize_identifier(identifier: str | None) -> list[str]:
    """SPEC-03 `tokenizeIdentifier` plus the whole identifier first when it has several parts.

    Parts keep SPEC-03's rules (at least 2 characters, deduplicated) and drop stopwords, so that
    `mm_click` yields `click` but never `mm`.

    >>> tokenize_identifier("coin-overview-send-button")
    ['coin-overview-send-button', 'coin', 'overview', 'send', 'button']
    """
    parts = split_identifier(identifier)
    seen: dict[str, None] = {}
    if len(parts) > 1 and identifier:
        whole = lower_chars(identifier.strip())
        if whole:
            seen[whole] = None
    for part in parts:
        if is_searchable(part):
            seen.setdefault(part, None)
    return list(seen)


def identifier_spellings(identifier: str) -> list[str]:
    """The whole identifier as typed (lowercased), then the same parts in the other common
    styles: kebab, snake and joined (camelCase, lowercased as the index stores it).

    One identifier is one sequence of words whatever its style, so `send_amount_input` finds a
    step that typed into `send-amount-input` as an exact match, not as a match of three words.

    >>> identifier_spellings("send_amount_input")
    ['send_amount_input', 'send-amount-input', 'sendamountinput']
    """
    parts = split_identifier(identifier)
    styles = [lower_chars(identifier), "-".join(parts), "_".join(parts), "".join(parts)]
    return list(dict.fromkeys(styles))
