"""Which session "current" means for each client of one server: its conversation.

Over stdio one client talks to the process. Over HTTP many agents may share it, each with its
own MCP session (the session-ful protocol versions, whose `mcp-session-id` the SDK has checked
before a call reaches a tool), and the session an agent started is its own: agent A's steps
never land in agent B's session. Requests of the stateless protocol (2026) have no MCP session:
they share one conversation (their clients pass `sessionId` when several share a server), and
a session header such a request carries never makes it another client's (`server.app.client_of`).

Conversations are kept for the `limit` most recently active clients, as many as the server
keeps MCP sessions open (KNOWHOW_HTTP_MAX_SESSIONS), so an agent is forgotten only once that
many others were active since it was. A client forgotten after it started a session is
remembered as forgotten (as many again): its next step without `sessionId` is refused with an
error saying to pass one, never filed into the server's default session (KNOWHOW_SESSION).
"""

from collections import OrderedDict
from dataclasses import dataclass


@dataclass
class Conversation:
    """What one client's conversation owns."""

    current_session: str | None
    """The session scope "current" means: the one this client started, else KNOWHOW_SESSION."""
    forgotten: bool = False
    """This client started a session the server has since forgotten (too many other clients
    were active meanwhile): it must name its session."""


class Conversations:
    """Each client's conversation, by its MCP session id."""

    def __init__(self, default_session: str | None, limit: int) -> None:
        self.default_session = default_session
        self.limit = limit
        self._kept: OrderedDict[str, Conversation] = OrderedDict()
        self._forgotten: OrderedDict[str, None] = OrderedDict()

    def of(self, client: str) -> Conversation:
        """The conversation of `client`; a client not seen before starts from the default
        session."""
        conversation = self._kept.pop(client, None)
        if conversation is None and client in self._forgotten:
            del self._forgotten[client]
            conversation = Conversation(None, forgotten=True)
        elif conversation is None:
            conversation = Conversation(self.default_session)
        self._kept[client] = conversation
        while len(self._kept) > self.limit:
            self._forget(*self._kept.popitem(last=False))
        return conversation

    def _forget(self, client: str, conversation: Conversation) -> None:
        if conversation.current_session in (None, self.default_session):
            return  # it loses nothing: it started no session of its own
        self._forgotten[client] = None
        while len(self._forgotten) > self.limit:
            self._forgotten.popitem(last=False)
