"""Recorded text shown as it is: what may not be in it.

Recorded values (screen names, flowTags, a page's heading, an element's name) come from pages
nobody here wrote. Where an answer offers one as it is — an empty answer's suggestions, a
completion — a value holding a character that changes how the text around it is read is left
out: control characters (a terminal escape, a line break inside a value), the Unicode line
and paragraph separators, and the bidirectional formatting characters that make text display
in another order than it is stored (`‮`, "Trojan Source", CVE-2021-42574).
"""

import re

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def holds_unsafe_chars(value: str) -> bool:
    """Whether `value` holds a control, line-separating or bidirectional formatting character.

    >>> holds_unsafe_chars("swap"), holds_unsafe_chars("a\\u202eb"), holds_unsafe_chars("a\\nb")
    (False, True, True)
    """
    return _UNSAFE.search(value) is not None
