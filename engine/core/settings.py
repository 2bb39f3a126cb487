"""The one settings object (environment prefix `KNOWHOW_`), read only by the CLI and the server."""

from pathlib import Path

import orjson
from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from analyzers import SynonymTable
from engine.core.errors import InvalidInput

DEFAULT_ROOT = Path("test-artifacts/llm-knowledge")
DEFAULT_INDEX = Path("index-data")
MAX_SYNONYMS_BYTES = 1 << 20
"""A synonyms file is read up to this size: a larger one (or an endless one, /dev/zero) is
refused instead of read until memory runs out."""


class Settings(BaseSettings):
    """Where the knowledge lives and how to analyse it.

    KNOWHOW_ROOT       knowledge root (default ./test-artifacts/llm-knowledge)
    KNOWHOW_INDEX      index directory (default ./index-data)
    KNOWHOW_SYNONYMS   JSON file with extra synonym groups and wallet glossary entries:
                       {"groups": [["send", "transfer"]],
                        "glossary": [{"says": ["ether"], "means": ["ETH"]}]}
    KNOWHOW_SESSION    the current session for scope "current" (default: the newest session)
    """

    model_config = SettingsConfigDict(env_prefix="KNOWHOW_", extra="ignore", validate_default=True)

    root: Path = DEFAULT_ROOT
    index: Path = DEFAULT_INDEX
    synonyms: Path | None = None
    session: str | None = None

    @field_validator("root", "index")
    @classmethod
    def _absolute(cls, path: Path) -> Path:
        """Resolved once, against the working directory at start-up: every later use (a file
        URI, a watcher, a message naming the folder) sees the same absolute path. Links are
        kept (`absolute`, not `resolve`): the root itself may be a link the user chose."""
        return path.absolute()

    def synonym_table(self) -> SynonymTable:
        """The default synonyms plus those of KNOWHOW_SYNONYMS; a file that cannot be read or
        used is `InvalidInput` naming it and what is wrong (the CLI and `serve` print that one
        line and exit 2)."""
        if self.synonyms is None:
            return SynonymTable()
        try:
            with self.synonyms.open("rb") as handle:
                data = handle.read(MAX_SYNONYMS_BYTES + 1)
        except OSError as exc:
            raise InvalidInput("KNOWHOW_SYNONYMS", f"{self.synonyms}: {exc.strerror}") from exc
        if len(data) > MAX_SYNONYMS_BYTES:
            raise InvalidInput(
                "KNOWHOW_SYNONYMS", f"{self.synonyms} is larger than {MAX_SYNONYMS_BYTES:,} bytes"
            )
        try:
            return SynonymTable.from_json(data)
        except orjson.JSONDecodeError as exc:
            raise InvalidInput("KNOWHOW_SYNONYMS", f"{self.synonyms} is not JSON: {exc}") from exc
        except ValueError as exc:
            raise InvalidInput("KNOWHOW_SYNONYMS", f"{self.synonyms}: {exc}") from exc
