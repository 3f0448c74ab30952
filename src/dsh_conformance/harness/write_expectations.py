"""``--write-expectations``: an expectation manifest for the failures of a run.

Each failing test gets an ``xfail`` entry whose reason is its raw outcome and the one
line its failure reads as, naming what it blames (D-421); an entry of the run's own
manifest that still applies is kept as it is, with its reason and links (and the ids a
failure newly blames); entries for other implementation versions are kept too.  An
existing file keeps its comments and order (tomlkit).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from dsh_conformance.outcomes import FAILING, Outcome

if TYPE_CHECKING:
    from dsh_conformance.adapters.expectations import Entry, Manifest
    from dsh_conformance.record import TestResult

#: Longest reason --write-expectations writes (cut at a word).
REASON_LIMIT: Final = 300


def words(text: str, limit: int) -> str:
    """*text* cut at the last whole word within *limit* characters (a manifest reason)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"


def entries(manifest: Manifest | None, results: Sequence[TestResult]) -> list[Entry]:
    """The manifest's entries after a run with *results*."""
    from dsh_conformance.adapters.expectations import Entry

    old = {e.id: e for e in manifest.entries} if manifest else {}
    # entries for other implementation versions are kept as they are
    out: dict[str, Entry] = {e.id: e for e in manifest.inactive} if manifest else {}
    for result in results:
        failed = result.outcome in FAILING - {Outcome.XPASS} or result.detail
        if result.expectation and result.expectation in old:
            kept = old[result.expectation]
            # a property that met no failure this time still has it (D-422)
            still = result.outcome is Outcome.UNSUPPORTED or failed or result.not_reproduced
            if still and kept.status in ("unsupported", "xfail"):
                assert manifest is not None  # old is empty without one
                allowed = manifest.expected_blame(result.nodeid, result.requirements)
                out[kept.id] = widened(kept, result.blame, allowed)
                continue
        if failed:
            out[result.nodeid] = Entry(
                id=result.nodeid,
                status="xfail",
                reason=words(reason(result), REASON_LIMIT),
                blames=result.blame,
            )
    return list(out.values())


def widened(entry: Entry, blame: Sequence[str], allowed: Sequence[str]) -> Entry:
    """*entry* naming too what *blame* has beyond *allowed* (the manifest's ids for the
    test, D-421); an entry that lets any failure blame anything stays so."""
    from attrs import evolve

    from dsh_conformance.adapters.expectations import unexpected_blame

    stray = unexpected_blame(allowed, blame)
    if not stray or not entry.expected_blame:
        return entry
    return evolve(entry, blames=tuple(dict.fromkeys((*entry.blames, *stray))))


def reason(result: TestResult) -> str:
    """The raw outcome and the one line the failure reads as (no class name, no
    escapes), the outcome once: a crash's or protocol problem's line names it already."""
    from dsh_conformance.reporting.failuretext import headline

    raw = result.detail or str(result.outcome)
    line = headline(result)
    if not line:
        return raw
    return line if line.split(":", 1)[0].split(" (", 1)[0] == raw else f"{raw}: {line}"


def _ids_in(path: Path, manifest: Manifest | None) -> set[str]:
    """The entry ids already there: in the file to update, else in the run's manifest."""
    if path.is_file():
        import tomllib

        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return set()
        return {str(e.get("id")) for e in data.get("expect", []) if isinstance(e, dict)}
    return {e.id for e in (*manifest.entries, *manifest.inactive)} if manifest else set()


def write(
    path: Path, manifest: Manifest | None, results: Sequence[TestResult], adapter: str
) -> str:
    """Write the manifest after a run with *results* against *adapter* to *path*; say
    what was written, in one line for stderr (a manifest is reviewed before it is
    committed: where it went and how much of it is new)."""
    from dsh_conformance.adapters.manifest_writer import render_manifest, update_manifest

    found = entries(manifest, results)
    there = _ids_in(path, manifest)
    new = sum(e.id not in there for e in found)
    said = (
        f"wrote {path}: {len(found)} entries ({new} new, {len(found) - new} kept): "
        "review every reason before committing it"
    )
    if path.is_file():  # keep the file's comments and order
        path.write_text(update_manifest(path.read_text(encoding="utf-8"), found), encoding="utf-8")
        return said
    text = render_manifest(
        found,
        adapter=adapter,
        comment=f"Expectation manifest for {adapter}, written by --write-expectations.\n"
        "Review every reason and add links before committing.",
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return said
