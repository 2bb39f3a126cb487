"""What one server process owns for its lifetime (store, engine, live index, browser) and what
each connected client owns (its conversation: which session "current" means).

Created by the lifespan (`open_state`) and handed to every tool; nothing lives in module
globals, so two servers in one process (tests) never share state. Over stdio one client talks
to the process; over HTTP several agents may, each with its own MCP session, so the session an
agent started (and records into by default) is kept per client (`for_client`): agent A's steps
never land in agent B's session. Engine calls are blocking (Tantivy, files) and run on worker
threads, so one slow search never stalls the protocol loop.
"""

from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

import anyio.to_thread

from engine import (
    IndexStatus,
    KnowledgeEngine,
    KnowledgeStore,
    LiveIndex,
    Offers,
    WriteFailed,
)
from server.browser.driver import BrowserDriver, load_screen_rules
from server.index_status import index_status
from server.settings import ServerSettings

T = TypeVar("T")
MAX_CONVERSATIONS = 256
"""Clients remembered by one HTTP server (the least recently active forgotten first)."""


@dataclass
class Conversation:
    """What one client's conversation owns."""

    current_session: str | None
    """The session scope "current" means: the one this client started, else KNOWHOW_SESSION."""


@dataclass
class ServerState:
    settings: ServerSettings
    store: KnowledgeStore
    engine: KnowledgeEngine
    live: LiveIndex
    cwd: Path
    browser: BrowserDriver
    """The browser tools' Chromium (started by launch, closed with the lifespan)."""
    conversation: Conversation
    """This client's conversation (see `for_client`); passed to each engine call, never kept
    in the engine."""
    offers: Offers = field(default_factory=Offers)
    """Targets that search results and priorKnowledge offered each session (in memory only):
    a later step that follows one and works records a recall link (engine.history.recall_links)."""

    conversations: OrderedDict[str, Conversation] = field(default_factory=OrderedDict)
    """Each client's conversation, by its MCP session id ("" over stdio: one client)."""

    def for_client(self, client: str) -> "ServerState":
        """This state as `client` sees it: shared store, engine and browser, its own
        conversation (a new one starts from KNOWHOW_SESSION)."""
        conversation = self.conversations.pop(client, None) or Conversation(self.settings.session)
        self.conversations[client] = conversation
        if len(self.conversations) > MAX_CONVERSATIONS:
            self.conversations.popitem(last=False)
        return replace(self, conversation=conversation)

    @property
    def current_session(self) -> str | None:
        return self.conversation.current_session

    @current_session.setter
    def current_session(self, session_id: str | None) -> None:
        self.conversation.current_session = session_id

    async def query(self, action: Callable[[], T]) -> T:
        """Run a read on a worker thread, after reloading so commits of any process are seen."""

        def run() -> T:
            self.engine.refresh()
            return action()

        return await anyio.to_thread.run_sync(run)

    async def write(self, action: Callable[[], T]) -> T:
        """Run a file write on a worker thread; it never waits for indexing (the watcher does).

        Every tool's write comes here, so a refused write (disk full, no permission) reaches
        the agent as `MM_WRITE_FAILED`, never as the SDK's internal error."""
        try:
            return await anyio.to_thread.run_sync(action)
        except OSError as exc:
            raise WriteFailed.from_os_error(exc) from exc

    async def status(self) -> IndexStatus:
        return await anyio.to_thread.run_sync(
            partial(index_status, self.live, self.engine, self.current_session)
        )


@asynccontextmanager
async def open_state(settings: ServerSettings) -> AsyncIterator[ServerState]:
    """Start the live index (writer or reader, decided by the lease) and the engine."""
    rules = load_screen_rules(settings.screen_rules)  # a bad rules file fails before anything runs
    browser = BrowserDriver(settings.chromium, rules, settings.tool_prefix)
    store = KnowledgeStore(settings.root)
    live = LiveIndex(
        store,
        settings.index,
        debounce_seconds=settings.debounce_ms / 1000,
        retry_seconds=settings.writer_retry_seconds,
        stall_seconds=settings.writer_stall_seconds,
        reconcile_seconds=settings.reconcile_seconds,
    )
    await anyio.to_thread.run_sync(partial(live.start, wait=settings.startup_wait_seconds))
    engine = KnowledgeEngine(
        settings.root,
        settings.index,
        synonyms=settings.synonym_table(),
    )
    try:
        yield ServerState(
            settings, store, engine, live, Path.cwd(), browser, Conversation(settings.session)
        )
    finally:
        try:
            await browser.aclose()
        finally:
            await anyio.to_thread.run_sync(live.close)
