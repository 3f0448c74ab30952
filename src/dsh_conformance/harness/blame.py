"""Which requirements a failed test blames, which it still judged, and how to replay it.

Each check blames exactly the requirement it proves (D-160); a failure outside any
check in a test citing several requirements blames them all (imprecise, never silent);
a result no check could read, a crash or a timeout blames none (D-212, D-251).  A
failed test still judges the cited requirements whose every check ran and passed
(D-330).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dsh_conformance.outcomes import FAILING, Outcome, broke
from dsh_conformance.profiles import PROFILES

if TYPE_CHECKING:
    from dsh_conformance.harness.selection import ItemMeta
    from dsh_conformance.options import RunOptions

#: Hypothesis profiles a replay command can name (the suite's own, ``fixed`` included).
_REPLAYABLE = frozenset(PROFILES)


def blame(
    exc: BaseException | None, meta: ItemMeta
) -> tuple[tuple[str, ...], list[dict[str, str]]]:
    """What a failure blames: its failed checks, or every requirement the test cites;
    and a ``blame-not-cited`` problem for each id it blames without citing (D-215)."""
    from dsh_conformance.checks import blamed, unreadable

    if exc is not None and unreadable(exc) is not None:
        return (), []  # a result no check could read blames no requirement (D-251)
    ids = blamed(exc) if exc is not None else ()
    stray = [i for i in ids if i not in meta.requirements]
    problems = []
    if stray:
        problems.append(
            {
                "id": meta.test_id,
                "kind": "blame-not-cited",
                "message": f"{meta.test_id} blames {', '.join(stray)}, which it does not "
                "cite: add the id to its @pytest.mark.req",
            }
        )
    return ids or meta.requirements, problems


def judged(
    meta: ItemMeta, outcome: Outcome, detail: str, blamed: Sequence[str], passed: Sequence[str]
) -> tuple[str, ...] | None:
    """For a failed test, the cited ids it concluded on (D-330): those it blames and
    those whose every check ran and passed (*passed*); None for any other test (it
    judges every id it cites, or none when the adapter broke)."""
    if not (outcome in FAILING or detail) or broke(outcome, detail):
        return None
    cited = set(meta.requirements)
    return tuple(dict.fromkeys([*blamed, *(r for r in passed if r in cited)]))


def unreadable_fields(
    meta: ItemMeta,
    outcome: Outcome,
    detail: str,
    blamed: Sequence[str],
    passed: Sequence[str],
    entries: list[dict[str, str]],
) -> tuple[Mapping[str, Any], ...]:
    """The checks of this test that could not read a field (D-521, D-522), by cited id
    it does not blame: that id is unjudged here, the test's other checks judge."""
    from dsh_conformance import unjudged

    if broke(outcome, detail):
        return ()
    cited = tuple(r for r in meta.requirements if r not in blamed)
    concluded = {*blamed, *passed}
    return tuple(
        e for e in unjudged.resolve(entries, cited, concluded) if e["requirement"] in cited
    )


def _catalog() -> Mapping[str, Any]:
    from dsh_conformance.spec import load_catalog

    return load_catalog().requirements  # cached by the catalog itself


def sentences() -> dict[str, str]:
    """Each requirement's sentence of a note (its clause, else its quote)."""
    return {rid: str(getattr(req, "clause", "") or req.quote) for rid, req in _catalog().items()}


def explain(blamed: Sequence[str], replay: str) -> str:
    """Which requirement failed, how it is judged, and the command that replays it
    (the section pytest's own report shows under the failure)."""
    catalog = _catalog()
    lines = []
    for rid in blamed:
        req = catalog.get(rid)
        if req is not None:
            lines.append(f"blames {rid} ({req.level}, {req.verdict} verdict): {req.title}")
    lines.append(f"replay: {replay}")
    return "\n".join(lines)


def replay(options: RunOptions, test_id: str) -> str:
    """``dsh-conformance run`` selecting this one test with the same examples."""
    from hypothesis import settings

    argv = ["dsh-conformance", "run", "--adapter", options.adapter]
    if options.seed is not None:
        argv += ["--seed", str(options.seed)]
    profile = settings.get_current_profile_name()
    if profile in _REPLAYABLE:
        argv += ["--hypothesis-profile", profile]
    if options.max_examples:
        argv += ["--max-examples", str(options.max_examples)]
    argv += ["--spec-profile", options.spec_profile]
    argv += ["--test", test_id]
    return shlex.join(argv)
