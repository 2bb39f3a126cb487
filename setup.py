"""Refuses, in words, a Python older than knowhow needs; everything else is in pyproject.toml.

pyproject.toml says `requires-python = ">=3.11"`, but the pip that Python 3.10 ships (23.0)
resolves a plain `pip install .`'s dependencies before it checks that, and then says only
"No matching distribution found for tantivy". This runs first, when pip asks for the metadata.
"""

import sys

if sys.version_info < (3, 11):  # noqa: UP036  (the point: it runs on older Pythons)
    sys.exit(
        f"knowhow needs Python >= 3.11; this is Python {sys.version.split()[0]} "
        f"({sys.executable}). Install with a Python 3.11 or newer."
    )

from setuptools import setup

setup()
