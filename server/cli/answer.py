"""The one skeleton of a command that answers once (index, search, supersede …).

A command's body takes its own options and a `Call` (the settings that --root and --index
chose, --json, the filters given) and returns its answer: the result and how to show it. The
`answers` decorator adds the shared options, runs the body and prints the answer as a table or
as the JSON envelope; a failure is the error envelope (--json) or a one-line message, with exit
status 2. Commands that do not answer once (batch-search, demo, serve) use the pieces directly.
"""

import inspect
import sys
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import orjson
import typer

from engine import (
    InvalidInput,
    KnowhowError,
    KnowledgeEngine,
    KnowledgeStore,
    LiveIndex,
    NotFound,
    Result,
    Settings,
    other_root,
)
from server.cli.options import Filters, IndexOpt, JsonOpt, RootOpt
from server.cli.render import err
from server.envelope import envelope

T = TypeVar("T")
Render = Callable[[], None]
Answer = tuple[Result | dict[str, Any], Render]
"""A body's answer: the envelope's `result` (with --json) and what prints it (without)."""

SHARED = (("root", RootOpt, None), ("index_dir", IndexOpt, None), ("as_json", JsonOpt, False))
"""The options every answering command takes, after its own: --root, --index, --json."""


@dataclass(frozen=True)
class Served:
    """What a running server lends a command it answers for the `knowhow` script: its settings
    (with the script's current session), its engine and its live index. The server checked
    that the script's --root, --index and synonyms are its own before lending them."""

    settings: Settings
    engine: KnowledgeEngine
    live: LiveIndex


SERVED: ContextVar[Served | None] = ContextVar("served", default=None)
"""Set (by `server.served_cli`) while a server runs a command; unset in the `knowhow` process."""


def settings_for(root: Path | None, index: Path | None) -> Settings:
    """The settings (environment, defaults) with --root and --index, when given, on top; both
    absolute from here on. A server answering the command lends its own."""
    if (served := SERVED.get()) is not None:
        return served.settings
    given: dict[str, Any] = {"root": root, "index": index}
    return Settings(**{key: value for key, value in given.items() if value is not None})


def existing_root(settings: Settings) -> Path:
    """The knowledge root; one that does not exist is an error naming it (indexing or
    searching it would silently find nothing)."""
    if not settings.root.is_dir():
        raise NotFound(
            f"knowledge root {settings.root} does not exist; pass --root (or KNOWHOW_ROOT) "
            "with the folder that holds the session folders"
        )
    return settings.root


def knowledge_root(settings: Settings) -> KnowledgeStore:
    """The knowledge root's store; a folder with folders of which none is a session folder
    (`session.json` or `steps/` inside) is refused, nothing written: indexing /etc would list
    its folders as sessions. An empty folder is a new root."""
    store = KnowledgeStore(existing_root(settings))
    folders = store.session_ids()
    if folders and not any(store.is_session_folder(folder) for folder in folders):
        raise InvalidInput(
            "root",
            f"{settings.root} is not a knowledge root: none of its {len(folders)} folders "
            f"({folders[0]}, …) holds session.json or steps/ as a session folder does; pass "
            "--root with the folder that holds the session folders",
        )
    return store


def open_engine(settings: Settings, *, cache_searches: bool = True) -> KnowledgeEngine:
    """The engine of a command that reads the index. A root that does not exist, or an index
    built from another root, is refused: either would answer from files that are not there."""
    existing_root(settings)
    if (held := other_root(settings.index, settings.root)) is not None:
        raise InvalidInput(
            "root",
            f"the index {settings.index} was built from {held}, not from {settings.root}: pass "
            f"--index with this root's index, or build one with `knowhow index --root "
            f"{settings.root} --index DIR`",
        )
    return KnowledgeEngine(
        settings.root,
        settings.index,
        synonyms=settings.synonym_table(),
        cache_searches=cache_searches,
    )


@dataclass(frozen=True)
class Call:
    """What a command's body is given besides its own options."""

    settings: Settings
    as_json: bool
    filters: dict[str, Any] | None
    """The filter options given, in the tools' names (`flowTag` …); None when none was."""

    def engine(self) -> KnowledgeEngine:
        served = SERVED.get()
        return served.engine if served is not None else open_engine(self.settings)

    def live_index(self) -> LiveIndex:
        """The index's live view, for its status: the server's own, or a reader of it."""
        served = SERVED.get()
        if served is not None:
            return served.live
        store = KnowledgeStore(existing_root(self.settings))
        return LiveIndex(store, self.settings.index, watch=False)

    def current_session(self, engine: KnowledgeEngine, session: str | None) -> str | None:
        """What scope "current" means here: --session, else KNOWHOW_SESSION, else the newest."""
        return session or self.settings.session or engine.newest_session()


def answers(
    filters: Filters | None = None,
) -> Callable[[Callable[..., Answer]], Callable[..., None]]:
    """Make `body(its options…, call)` a command: its own options, then --root, --index, --json,
    then `filters` (their values reach the body as `call.filters`), all declared once here."""
    chosen = filters or {}

    def decorate(body: Callable[..., Answer]) -> Callable[..., None]:
        signature = inspect.signature(body)
        own = [p for p in signature.parameters.values() if p.name != "call"]
        shared = [_keyword(name, option, default) for name, option, default in SHARED]
        shared += [_keyword(name, option, None) for name, (_, option) in chosen.items()]

        @wraps(body)
        def command(
            *, root: Path | None, index_dir: Path | None, as_json: bool, **given: Any
        ) -> None:
            values = {key: given.pop(name) for name, (key, _) in chosen.items()}
            present = {key: value for key, value in values.items() if value is not None}
            call = Call(settings_for(root, index_dir), as_json, present or None)
            result, render = run(as_json, lambda: body(**given, call=call))
            emit(result, as_json, render)

        command.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=own + shared, return_annotation=None
        )
        return command

    return decorate


def _keyword(name: str, option: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=option
    )


def run(as_json: bool, action: Callable[[], T]) -> T:
    """Run a command's action; a failure is an error envelope (--json) or a one-line message,
    and exit status 2 — never a traceback where a program reads JSON."""
    try:
        return action()
    except KnowhowError as exc:
        fail(exc, as_json)
    except OSError as exc:  # a file or folder the command could not read or write
        fail(KnowhowError(str(exc)), as_json)
    except Exception as exc:
        if not as_json:
            raise
        # Machine output stays parseable even on a bug; the kind is kept in the message.
        fail(KnowhowError(f"{type(exc).__name__}: {exc}"), as_json)


def fail(error: KnowhowError, as_json: bool) -> NoReturn:
    if as_json:
        sys.stdout.write(orjson.dumps(envelope(error)).decode() + "\n")
    else:
        err.print(f"[red]{error.code}[/red]: {error.message}")
    raise typer.Exit(2) from None


def emit(result: Result | dict[str, Any], as_json: bool, render: Render) -> None:
    if as_json:
        sys.stdout.write(orjson.dumps(envelope(result)).decode() + "\n")
    else:
        render()
