"""Is the writer's generation whole, and the health `mm_knowledge_status` reports.

A damaged generation heals: the writer verifies the generation when it opens it, re-reads new
or changed segment files every `VERIFY_SECONDS`, and verifies in full when any process reported
damage (`engine.index.integrity`). Damage found is reported to every process and the writer
steps down, so that the next takeover rebuilds the generation from the files.
"""

import logging
import time
from pathlib import Path

from engine.core import IndexDamaged, VectorsDamaged
from engine.index import GenerationCheck, clear_damage, report_damage, reported_damage
from engine.live.lease import writer_pid

log = logging.getLogger(__name__)

READ_ONLY_REASON = (
    "the index folder {base} is read-only to this server: searches answer from the index as it "
    "is; steps recorded since are not indexed, and nothing is rebuilt, until a knowhow server "
    "that can write the folder runs"
)
VERIFY_SECONDS = 5.0
"""How often the writer re-checks its generation's segment files (a few stats; files found
whole before are not read again)."""


class GenerationHealth:
    """The integrity checks of the generation the writer writes."""

    def __init__(self) -> None:
        self._check: GenerationCheck | None = None
        self._next_verify = 0.0

    def verify(self, generation: Path) -> None:
        """Verify `generation` in full before writing it (`IndexDamaged` when it is not whole),
        and clear a reported damage the check does not confirm."""
        check = self._check = GenerationCheck(generation, vectors=True)
        self._next_verify = time.monotonic() + VERIFY_SECONDS
        check.verify(full=True)
        clear_damage(generation)

    def follow(self, generation: Path) -> None:
        """Check `generation` from now on (one just rebuilt, known whole)."""
        self._check = GenerationCheck(generation, vectors=True)

    def damaged(self, generation: Path) -> bool:
        """Whether the writer's generation is damaged: reported by any process, or found by
        the periodic check of new and changed segment files. Damage is reported to all."""
        reported = reported_damage(generation)
        if reported is None and time.monotonic() < self._next_verify:
            return False
        self._next_verify = time.monotonic() + VERIFY_SECONDS
        if self._check is None or self._check.path != generation:
            self._check = GenerationCheck(generation, vectors=True)
        try:
            self._check.verify(full=reported is not None)
        except IndexDamaged as exc:
            log.warning("live index: %s", exc.message)
            report_damage_to_readers(generation, exc)
            return True
        if reported is not None:
            log.info("a reported damage of %s was not confirmed: %s", generation, reported)
            clear_damage(generation)
        return False


def report_damage_to_readers(generation: Path, damage: IndexDamaged) -> None:
    """Tell every process to stop searching a damaged generation, unless only its vectors are
    damaged: then readers go on answering by keywords (they find vector damage themselves and
    say `degraded`) while the writer rebuilds."""
    if not isinstance(damage, VectorsDamaged):
        report_damage(generation, damage.reason)


def health(
    base: Path,
    generation: Path | None,
    error: str | None,
    rebuilding: str | None,
    failing: str | None = None,
    *,
    read_only: bool = False,
) -> tuple[str, str | None]:
    """ "ok"; "rebuilding" (damaged, missing or stale, a writer is rebuilding it from the
    files); "damaged" (no live writer to rebuild it yet); "unavailable" (it cannot be read
    right now); "read-only" (it is searched as it is: this process cannot write the index
    folder, so nothing is indexed or rebuilt here); or "stalled" (it can be searched, but new
    steps are not being indexed: the live index keeps failing, `failing` says how). With the
    reason, for every state but "ok"."""
    if rebuilding is not None:
        return "rebuilding", rebuilding
    damage = reported_damage(generation) if generation is not None else None
    if damage is not None:
        if writer_pid(base) is None:
            return "damaged", damage
        return "rebuilding", damage
    if error is not None:
        return "unavailable", error
    if read_only:
        return "read-only", READ_ONLY_REASON.format(base=base)
    if failing is not None:
        return "stalled", failing
    return "ok", None
