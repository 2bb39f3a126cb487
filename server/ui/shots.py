"""A step's screenshot, read only from inside its own session folder.

The record names its image (`artifacts.screenshot.path`, relative to the session folder as the
browser tools save it; `in_session` reads the older recorders' longer paths). Recorded text is
not trusted: the store refuses a path that leaves the folder it names, a link, anything but a
regular file, and one larger than `MAX_BYTES` (`KnowledgeStore.read_artifact`); what is read
must be a PNG or a JPEG. The page then says why the screenshot is missing instead.
"""

from engine import InvalidInput, KnowledgeStore, NotFound, StepInput, validate

MAX_BYTES = 8 * 1024 * 1024
"""Largest screenshot served (a full-page PNG of a laptop screen is ~1 MB)."""
TYPES = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg"}


def screenshot(store: KnowledgeStore, step_id: str) -> tuple[bytes, str]:
    """The image bytes and media type of a step's screenshot; raises `InvalidInput` or
    `NotFound` saying why it cannot be shown."""
    session_id, _, stem = validate(StepInput, {"stepId": step_id}).stepId.partition("/")
    try:
        record = store.read_step(session_id, f"{stem}.json")
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        raise NotFound(f"step {step_id!r} cannot be read") from None
    artifacts = (record.model_extra or {}).get("artifacts")
    shot = artifacts.get("screenshot") if isinstance(artifacts, dict) else None
    path = shot.get("path") if isinstance(shot, dict) else None
    if not isinstance(path, str):
        raise NotFound(f"step {step_id!r} has no screenshot")
    try:
        data = store.read_artifact(session_id, in_session(path, session_id), MAX_BYTES)
    except FileNotFoundError:
        raise NotFound(f"the screenshot of {step_id!r} is missing") from None
    except OSError as exc:  # a link, not a regular file, too large
        raise InvalidInput("path", f"the screenshot cannot be shown: {exc}") from None
    kind = next((t for magic, t in TYPES.items() if data.startswith(magic)), None)
    if kind is None:
        raise InvalidInput("path", "the screenshot is neither a PNG nor a JPEG")
    return data, kind


def in_session(path: str, session_id: str) -> str:
    """The path relative to the session folder. Earlier recorders wrote it from the folder they
    ran in (`test-artifacts/llm-knowledge/<sessionId>/screenshots/…`): what follows the
    session's own id is the part inside its folder; anything else is checked as it is."""
    parts = path.split("/")
    if len(parts) > 3 and parts[-3] == session_id:
        return "/".join(parts[-2:])
    return path
