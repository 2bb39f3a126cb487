"""A step's screenshot, read only from inside its own session folder.

The record names its image (`artifacts.screenshot.path`, relative to the session folder, as
`save_artifact` writes it: `<folder>/<file>`). Recorded text is not trusted: a path with more
or fewer parts, `..`, a hidden or absolute part, a link, a file that is not PNG or JPEG, or
one larger than `MAX_BYTES` is refused; the page then shows the screenshot as missing.
"""

from engine import InvalidInput, NotFound
from engine.core.files import read_regular, validate_step_id
from engine.records import STEPS_DIR, KnowledgeStore

MAX_BYTES = 8 * 1024 * 1024
"""Largest screenshot served (a full-page PNG of a laptop screen is ~1 MB)."""
TYPES = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg"}


def screenshot(store: KnowledgeStore, step_id: str) -> tuple[bytes, str]:
    """The image bytes and media type of a step's screenshot; raises `InvalidInput` or
    `NotFound` saying why it cannot be shown."""
    session_id, _, stem = validate_step_id(step_id).partition("/")
    try:
        record = store.read_step(session_id, f"{stem}.json")
    except (OSError, ValueError):
        raise NotFound(f"step {step_id!r} cannot be read") from None
    artifacts = (record.model_extra or {}).get("artifacts")
    shot = artifacts.get("screenshot") if isinstance(artifacts, dict) else None
    path = shot.get("path") if isinstance(shot, dict) else None
    if not isinstance(path, str):
        raise NotFound(f"step {step_id!r} has no screenshot")
    parts = path.split("/")
    if len(parts) != 2 or parts[0] == STEPS_DIR or any(p.startswith(".") or not p for p in parts):
        raise InvalidInput("path", "the screenshot's path does not name a file of its session")
    try:
        with store.folder(session_id, parts[0]) as folder:
            data = read_regular(folder, parts[1], MAX_BYTES)
    except FileNotFoundError:
        raise NotFound(f"the screenshot of {step_id!r} is missing") from None
    except OSError as exc:  # a link, not a regular file, too large
        raise InvalidInput("path", f"the screenshot cannot be shown: {exc}") from None
    kind = next((t for magic, t in TYPES.items() if data.startswith(magic)), None)
    if kind is None:
        raise InvalidInput("path", "the screenshot is neither a PNG nor a JPEG")
    return data, kind
