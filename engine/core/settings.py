"""The one settings object (environment prefix `KNOWHOW_`), read only by the CLI and the server."""

from pathlib import Path

from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from analyzers import SynonymTable

DEFAULT_ROOT = Path("test-artifacts/llm-knowledge")
DEFAULT_INDEX = Path("index-data")


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
        if self.synonyms is None:
            return SynonymTable()
        return SynonymTable.from_json(self.synonyms.read_bytes())
