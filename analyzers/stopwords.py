"""Stopwords: SPEC-03 FR-3 English list plus the tool-prefix words `mm` and `mcp` (§8.1); and
the words that only shape a question, which an answer's coverage leaves out."""

MIN_TOKEN_LENGTH = 2

STOPWORDS: frozenset[str] = frozenset(
    {
        "a",
        "an",
        "the",
        "to",
        "from",
        "in",
        "on",
        "at",
        "for",
        "with",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "flow",
        "test",
        "should",
        "can",
        "will",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "this",
        "that",
        "these",
        "those",
        "it",
        "mm",
        "mcp",
    }
)


def is_searchable(token: str) -> bool:
    """A token worth indexing or querying: long enough and not a stopword."""
    return len(token) >= MIN_TOKEN_LENGTH and token not in STOPWORDS


ASKING_WORDS: frozenset[str] = frozenset(
    {
        *("how", "why", "what", "which", "where", "when", "who", "whom", "whose"),
        *("i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "you", "your", "yours"),
        *("he", "him", "his", "she", "her", "hers", "they", "them", "their", "its"),
        *("of", "by", "about", "there", "here", "so", "if", "then", "than", "just", "please"),
        *("some", "any", "also", "very", "really", "anymore", "still", "again", "ever"),
        *("would", "could", "shall", "may", "might", "must", "am", "being"),
        # what is left of a contraction once its apostrophe splits it (`don't` -> `don`)
        *("don", "doesn", "didn", "isn", "aren", "wasn", "weren", "won", "wouldn", "couldn"),
        *("shouldn", "haven", "hasn", "hadn", "cannot"),
    }
)
"""Words that shape a question or a sentence (`how`, `why`, `my`, `of`, what is left of
`don't`) but name nothing a recorded step could hold: a query's answer is not missing anything
when no step mentions them. They are searched like any word (a step may hold one); an answer's
coverage leaves them out (`names_nothing`)."""


def names_nothing(word: str) -> bool:
    """Whether a query word only shapes the sentence: a stopword or an asking word."""
    lowered = word.lower()
    return lowered in STOPWORDS or lowered in ASKING_WORDS


CARRYING_VERBS: frozenset[str] = frozenset(
    {
        *("get", "gets", "got", "getting", "gotten", "make", "makes", "made", "making", "let"),
        *("lets", "letting", "keep", "keeps", "kept", "keeping", "take", "takes", "took"),
        *("taken", "taking", "give", "gives", "gave", "given", "giving", "put", "puts"),
        *("putting", "go", "goes", "went", "gone", "going", "come", "comes", "came", "coming"),
        *("want", "wants", "wanted", "wanting", "need", "needs", "needed", "needing", "try"),
        *("tries", "tried", "trying", "seem", "seems", "seemed", "happen", "happens"),
        *("happened", "say", "says", "said", "tell", "tells", "told", "ask", "asks", "asked"),
        *("asking", "know", "knows", "knew", "think", "like", "mean", "means", "meant"),
        *("supposed", "doing", "done", "having", "becomes", "became"),
        *("turn", "turns", "turned", "turning"),
    }
)
"""The verbs that carry an English sentence rather than say what it is about: light verbs
(`get`, `make`, `keep`, `take`), saying, wanting and knowing (`want`, `ask`, `know`), and
`done` (`when I'm done`). In a sentence they are grammar; as words of a step they are parts of
identifiers (`get-started`, `get_state`, `pin-extension-done`) that a sentence does not mean,
so the keyword leg weighs them little there (`engine.query.plan.SENTENCE_VERB_WEIGHT`)."""


def carries_a_sentence(word: str) -> bool:
    """Whether a query word is one of the verbs that carry a sentence (`CARRYING_VERBS`)."""
    return word.lower() in CARRYING_VERBS


GENERIC_WORDS: frozenset[str] = frozenset(
    {
        # prepositions and the particles of phrasal verbs (`end up`, `back out`, `pull up`)
        *("above", "across", "after", "against", "along", "among", "around", "as", "away"),
        *("back", "before", "behind", "below", "beneath", "beside", "between", "beyond"),
        *("down", "during", "except", "inside", "into", "near", "onto", "out", "outside"),
        *("over", "past", "per", "round", "since", "through", "throughout", "till", "toward"),
        *("towards", "under", "underneath", "until", "up", "upon", "via", "within", "without"),
        # negation: a failure is read from its phrase (`analyzers.errors`), not from `not`
        *("not", "no"),
        # conjunctions
        *("although", "because", "though", "unless", "whereas", "whether", "while", "once"),
        *("instead", "rather", "either", "neither", "nor", "yet", "otherwise"),
        # determiners, quantifiers, indefinite pronouns, vague nouns
        *("all", "another", "anybody", "anyone", "anything", "anywhere", "both", "each", "else"),
        *("enough", "every", "everybody", "everyone", "everything", "everywhere", "few", "lot"),
        *("lots", "many", "more", "most", "much", "none", "nobody", "nothing", "nowhere"),
        *("other", "others", "own", "same", "several", "somebody", "someone", "something"),
        *("somewhere", "such", "whatever", "whichever", "whoever", "one", "ones", "two", "bit"),
        *("kind", "sort", "way", "ways", "thing", "things", "stuff", "part", "different"),
        *("whole", "able", "sure", "certain", "itself", "themselves", "yourself", "ourselves"),
        # verbs that carry a sentence, not what it is about
        *CARRYING_VERBS,
        *("look", "looks"),
        # adverbs of time, degree and manner
        *("actually", "already", "always", "anyway", "basically", "currently", "even"),
        *("maybe", "never", "now", "often", "only", "perhaps", "quite", "right", "simply"),
        *("somehow", "sometimes", "soon", "too", "usually", "well", "probably", "exactly"),
        *("first", "next", "later", "almost", "whenever", "wherever", "earlier", "recent"),
        *("recently", "lately", "meanwhile", "eventually", "finally", "suddenly"),
        *("use", "uses", "used", "using"),
        # what every step of a web UI test happens in: the browser, a page, a site, an element
        *("browser", "page", "pages", "site", "sites", "website", "websites", "webpage", "web"),
        *("window", "element", "elements", "app", "application", "ui", "interface", "box"),
        *("field", "fields", "demo", "sample", "example", "agent", "user", "tool", "tools"),
        *("popup", "popups", "dialog", "modal", "view", "views", "item", "items", "entry"),
        *("entries", "step", "steps", "run", "runs"),
    }
)
"""Words that name no particular memory, though they may be more than a question's shape: the
function words of English beyond the asking words (prepositions and particles, conjunctions,
quantifiers, indefinite pronouns), the verbs that carry a sentence (`get`, `make`, `keep`, `try`,
`ask`) and the words of any web UI test (a browser, a page, a site, a box, an element). An
agent's sentence is full of them ("the box for how much to pay could not be found when I went
to pay someone"), and no recorded step needs to hold them for the answer to be about what the
sentence asks: an answer's coverage leaves them out (`names_no_memory`), as it does the asking
words. They are searched like any word, and a query of only such words is still searched."""


def names_no_memory(word: str) -> bool:
    """Whether a query word names nothing a recorded step must hold for an answer to cover the
    query: a word that only shapes the sentence (`names_nothing`) or a generic one
    (`GENERIC_WORDS`)."""
    return names_nothing(word) or word.lower() in GENERIC_WORDS
