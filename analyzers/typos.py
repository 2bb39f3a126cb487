"""Typo tolerance helpers: a bounded Damerau-Levenshtein distance and how many edits to allow."""


def max_typo_edits(token: str) -> int:
    """Edits tolerated for a query token: none below 4 letters, one up to 7, two beyond."""
    if len(token) < 4:
        return 0
    return 1 if len(token) <= 7 else 2


def edit_distance(a: str, b: str, limit: int = 2) -> int:
    """Optimal-string-alignment distance (an adjacent swap costs 1), or `limit + 1` when larger.

    `sned` -> `send` and `swpa` -> `swap` are one edit; `confrim` -> `confirm` is one.
    """
    if a == b:
        return 0
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        best = cur[0]
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
            best = min(best, cur[j])
        if best > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[len(b)] if prev[len(b)] <= limit else limit + 1
