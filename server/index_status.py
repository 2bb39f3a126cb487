"""What `mm_knowledge_status` and `knowhow status` report: the live index's view of the index,
and how search uses the embedding model. One function, so the tool and the command agree."""

from engine import IndexStatus, KnowhowError, KnowledgeEngine, LiveIndex


def index_status(
    live: LiveIndex, engine: KnowledgeEngine, current_session: str | None = None
) -> IndexStatus:
    """The index as it is now (blocking: run it off the event loop)."""

    def fresh_counts() -> dict[str, int]:
        engine.refresh()
        return engine.document_counts()

    status = live.status(fresh_counts, current_session)
    try:
        semantic = engine.semantic_status()
    except KnowhowError:  # no index yet: the status already says so
        return status
    return status.model_copy(update={"semantic": semantic})
