"""What form a query takes: a sentence an agent wrote, or words and identifiers it looked for.

A sentence ("which thing do I press to begin paying someone", "the box for how much to pay
could not be found") carries its meaning in how its words go together; most of its words name
nothing a step holds, and those that do are the everyday words of the agent, not the app's.
Keyword search answers it by the few words it happens to share with the records, meaning by
what it says, so a search leans more on meaning for a sentence (`engine.meaning.join`). Read
from general English only: the length of the query and its share of words that name no memory
(`analyzers.stopwords.names_no_memory`), never from the words of any particular query.
"""

from analyzers.identifiers import split_identifier
from analyzers.stopwords import names_no_memory
from analyzers.text import holds_phrase, words

SENTENCE_WORDS = 5
"""Words a query needs to be read as a sentence (`run the send flow` is not one)."""
SENTENCE_FRAME_WORDS = 2
"""Of them, words that name no memory (`how`, `my`, `to`, `get`, `page`)."""


def is_sentence(text: str) -> bool:
    """Whether a query reads as a sentence: at least `SENTENCE_WORDS` words, at least
    `SENTENCE_FRAME_WORDS` of them naming no memory, and no compound identifier (a query that
    types `coin-overview-send` asks for that element, whatever its other words)."""
    said = words(text)
    if len(said) < SENTENCE_WORDS or any(len(split_identifier(word)) > 1 for word in said):
        return False
    return sum(1 for word in said if names_no_memory(word)) >= SENTENCE_FRAME_WORDS


def _lowered(text: str) -> list[str]:
    """The words of `text`, lowercased: how the readings of a query's form compare them."""
    return [word.lower() for word in words(text)]


ASKING_WHAT = frozenset({"what", "which", "whats"})
"""Question words that ask for a thing, not a way (`how`) or a cause (`why`)."""
SHOWING_WORDS = frozenset(
    {
        *("show", "shows", "shown", "showed", "showing", "display", "displays", "displayed"),
        *("appear", "appears", "appeared", "visible", "see", "seen", "sees", "look", "looks"),
        *("say", "says", "said", "read", "reads", "contain", "contains", "listed", "list"),
    }
)
"""Verbs of what a screen shows: a question asking what something shows, looks like, says or
lists asks for what a screen was observed to hold."""
BEING = frozenset({"is", "are", "was", "were", "s"})
WORDS_TO_ON = 4
"""`what [fields] are on …`: how far after the question word its `is on` may come."""
"""`what is on …`, `what's on …` (an apostrophe splits `what's`), `what are on …`."""


def asks_what_is_shown(text: str) -> bool:
    """Whether a query asks what a screen shows: a question for a thing (`what`, `which`)
    with a verb of showing (`what did the first screen show`, `which buttons appear`) or
    asking what is on something (`what's on the signature popup`, `what fields are on the
    review`)."""
    said = _lowered(text)
    if not ASKING_WHAT.intersection(said):
        return False
    if SHOWING_WORDS.intersection(said):
        return True
    asking = [i for i, word in enumerate(said) if word in ASKING_WHAT]
    return any(
        said[j] in BEING and said[j + 1] == "on"
        for i in asking
        for j in range(i + 1, min(i + WORDS_TO_ON, len(said) - 1))
    )


PLACE_NOUNS = frozenset({"page", "screen", "view"})
"""Nouns that make the word before them a place of the app (`the swap page`, `unlock screen`)."""
TOWARD = frozenset({"to", "into", "onto"})
"""Prepositions that make a place where a step went, not where it was done (`get to the
preferences page`): such a place is left to the words and the meaning."""
TOWARD_REACH = 4
"""How many words before a place its `to` may come (`into the wallet's settings page`: an
apostrophe splits `wallet's` in two)."""


def places_named(text: str) -> frozenset[str]:
    """The words a query names as the place where something is done: the word before `page`,
    `screen` or `view` (`swap` of `the swap page`, `unlock` of `errors on the unlock screen`),
    unless the place is where the query goes (`go to the settings page`). A step done on that
    screen answers such a query better than one that only led there or mentions it (the
    keyword leg weighs the screen acted on more for these words: `engine.query.plan`).

    >>> sorted(places_named("errors on the swap page")), sorted(places_named("go to the swap page"))
    (['swap'], [])
    """
    said = _lowered(text)
    return frozenset(
        word
        for i, word in enumerate(said[:-1])
        if said[i + 1] in PLACE_NOUNS and not TOWARD & set(said[max(0, i - TOWARD_REACH) : i])
    )


CHECK_OPENINGS = (
    ("how", "can", "i", "tell"),
    ("how", "do", "i", "tell"),
    ("how", "can", "i", "know"),
    ("how", "do", "i", "know"),
    ("how", "would", "i", "know"),
    ("make", "sure"),
    ("check", "that"),
    ("check", "whether"),
    ("check", "if"),
    ("verify",),
    ("confirm", "that"),
    ("ensure",),
    ("see", "whether"),
    ("see", "if"),
)
"""How English asks for a check: that something happened or shows (`make sure the transfer
shows up`, `how can I tell the site sees my account`). `confirm` alone is a button's word."""


def asks_for_a_check(text: str) -> bool:
    """Whether a query asks how to check that something happened or shows: any of the
    `CHECK_OPENINGS`, anywhere in it. A test checks by waiting for what should show
    (`mm_wait_for`), so such a query asks for the waits that worked.

    >>> asks_for_a_check("make sure the transfer shows up"), asks_for_a_check("confirm the swap")
    (True, False)
    """
    return holds_phrase(_lowered(text), CHECK_OPENINGS)
