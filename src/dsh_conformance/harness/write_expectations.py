"""``--write-expectations``: an expectation manifest for the failures of a run.

Each failing test gets an ``xfail`` entry whose reason is its raw outcome and the one
line its failure reads as; an entry of the run's own manifest that still applies is
kept as it is, with its reason and links; entries for other implementation versions are
kept too.  An existing file keeps its comments and order (tomlkit).
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
    from dsh_conformance.reporting.failuretext import headline

    old = {e.id: e for e in manifest.entries} if manifest else {}
    # entries for other implementation versions are kept as they are
    out: dict[str, Entry] = {e.id: e for e in manifest.inactive} if manifest else {}
    for result in results:
        failed = result.outcome in FAILING - {Outcome.XPASS} or result.detail
        if result.expectation and result.expectation in old:
            kept = old[result.expectation]
            still = result.outcome is Outcome.UNSUPPORTED or failed
            if still and kept.status in ("unsupported", "xfail"):
                out[kept.id] = kept
                continue
        if failed:
            raw = result.detail or str(result.outcome)
            line = headline(result)  # one clean line: no class name, no escapes
            out[result.nodeid] = Entry(
                id=result.nodeid,
                status="xfail",
                reason=words(f"{raw}: {line}" if line else raw, REASON_LIMIT),
            )
    return list(out.values())


def write(
    path: Path, manifest: Manifest | None, results: Sequence[TestResult], adapter: str
) -> None:
    """Write the manifest after a run with *results* against *adapter* to *path*."""
    from dsh_conformance.adapters.expectations import render_manifest, update_manifest

    found = entries(manifest, results)
    if path.is_file():  # keep the file's comments and order
        path.write_text(update_manifest(path.read_text(encoding="utf-8"), found), encoding="utf-8")
        return
    text = render_manifest(
        found,
        adapter=adapter,
        comment=f"Expectation manifest for {adapter}, written by --write-expectations.\n"
        "Review every reason and add links before committing.",
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
