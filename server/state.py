"""What one server process owns for its lifetime (store, engine, live index, browser) and what
each connected client owns (its conversation: which session "current" means).

Created by the lifespan (`open_state`) and handed to every tool; nothing lives in module
globals, so two servers in one process (tests) never share state. Over stdio one client talks
to the process; over HTTP several agents may, each with its own MCP session, so the session an
agent started (and records into by default) is kept per client (`for_client`,
`server.conversations`): agent A's steps never land in agent B's session. Engine calls are
blocking (Tantivy, files) and run on worker threads, so one slow search never stalls the
protocol loop.
"""

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
from server.conversations import Conversation, Conversations
from server.index_status import index_status
from server.settings import ServerSettings
from server.workload import Gone, Workload, never_gone

T = TypeVar("T")


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
    conversations: Conversations
    """Each client's conversation ("" over stdio: one client)."""
    workload: Workload
    """Bounds the reads in flight, of each client and of all (`server.workload`)."""
    offers: Offers = field(default_factory=Offers)
    """Targets that search results and priorKnowledge offered each session (in memory only):
    a later step that follows one and works records a recall link (engine.history.recall_links)."""
    client: str = ""
    """The client of this call (`server.app.client_of`); "" over stdio."""
    gone: Gone = never_gone
    """Whether the client of this call has disconnected."""

    def for_client(self, client: str, gone: Gone = never_gone) -> "ServerState":
        """This state as `client` sees it (`server.app.client_of`): shared store, engine and
        browser, its own conversation."""
        return replace(self, conversation=self.conversations.of(client), client=client, gone=gone)

    @property
    def current_session(self) -> str | None:
        return self.conversation.current_session

    @current_session.setter
    def current_session(self, session_id: str | None) -> None:
        self.conversation.current_session = session_id
        self.conversation.forgotten = False

    async def query(self, action: Callable[[], T]) -> T:
        """Run a read on a worker thread, after reloading so commits of any process are seen,
        within the bounds of `workload`."""

        def run() -> T:
            self.engine.refresh()
            return action()

        return await self.workload.run(self.client, self.gone, run)

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
    synonyms = settings.synonym_table()  # and so does a bad synonyms file
    browser = BrowserDriver(settings.chromium, rules, settings.tool_prefix)
    store = KnowledgeStore(settings.root)
    # writes a killed server left half-done (temp files beside their targets) are swept once
    await anyio.to_thread.run_sync(store.sweep_unfinished_writes)
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
        synonyms=synonyms,
    )
    try:
        conversations = Conversations(settings.session, settings.http_max_sessions)
        workload = Workload(
            in_all=settings.queries_running,
            per_client=settings.client_queries,
            waiting=settings.queries_waiting,
        )
        yield ServerState(
            settings,
            store,
            engine,
            live,
            Path.cwd(),
            browser,
            conversations.of(""),
            conversations,
            workload,
        )
    finally:
        try:
            await browser.aclose()
        finally:
            await anyio.to_thread.run_sync(live.close)
