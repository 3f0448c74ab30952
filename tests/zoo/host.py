"""Host defects: session candidates for mention completion (HOST-*)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_conformance.model import candidates, jsstr
from dsh_conformance.model.candidates import Candidate, SessionRecord
from zoo import Area
from zoo._base import Broken, Patch

AREA = Area(capabilities=["candidates"], requirements=["HOST-*"])

_list = candidates.list_candidates
_to_json = Candidate.to_json


class IdLabels(Broken):
    name = "candidates labelled by id"
    invariant = "Labels every candidate with its session id, ignoring the latest title."
    kills = frozenset({"HOST-002"})
    collateral_ok = frozenset({"HOST-012", "HOST-013"})

    def patches(self) -> tuple[Patch, ...]:
        return ((candidates, "latest_title", lambda events: None),)


class FirstTitle(Broken):
    name = "first title, not latest"
    invariant = "Labels a candidate with the session's first title instead of its latest one."
    kills = frozenset({"HOST-002"})

    def patches(self) -> tuple[Patch, ...]:
        latest = candidates.latest_title

        return ((candidates, "latest_title", lambda events: latest(list(reversed(events)))),)


class TitleSearch(Broken):
    name = "discovery searches titles"
    invariant = "Also matches the query against titles (v1 discovery filters only id and cwd)."
    kills = frozenset({"HOST-011"})

    def patches(self) -> tuple[Patch, ...]:
        def list_candidates(
            target_id: str,
            target_cwd: str | None,
            records: Sequence[SessionRecord],
            query: str = "",
            limit: int = 50,
        ) -> list[Candidate]:
            found = _list(target_id, target_cwd, records, query, limit)
            if not isinstance(query, str) or not query:
                return found
            needle = jsstr.canonical(query).lower()
            have = {c.session_id for c in found}
            extra = [
                r
                for r in records
                if r.title is not None
                and needle in r.title.lower()
                and r.header.id not in have
                and r.header.id != target_id
            ]
            if not extra:
                return found
            wanted = have | {r.header.id for r in extra}
            every = _list(target_id, target_cwd, records, "", 2**53 - 1)
            return [c for c in every if c.session_id in wanted][:limit]

        return ((candidates, "list_candidates", list_candidates),)


class RawControls(Broken):
    name = "terminal controls not escaped"
    invariant = "Shows ids, cwds and labels with their raw terminal control characters."
    kills = frozenset({"HOST-004"})

    def patches(self) -> tuple[Patch, ...]:
        return ((candidates, "display_text", lambda text: text),)


class EscapedUri(Broken):
    name = "URI of the escaped id"
    invariant = (
        "Builds the candidate's URI and mention from the escaped display id, not the original id."
    )
    kills = frozenset({"HOST-004"})

    def patches(self) -> tuple[Patch, ...]:
        def to_json(candidate: Candidate) -> dict[str, Any]:
            shown = candidates.display_inline(candidate.session_id)
            return _to_json(
                Candidate(shown, candidate.label, candidate.cwd, candidate.created_at)
            ) | {"sessionId": candidate.session_id}

        return ((Candidate, "to_json", to_json),)


class SelfListed(Broken):
    name = "the target lists itself"
    invariant = "Offers the target session as a candidate for its own mention."
    # Self exclusion is the profile's (D-49, D-253): HOST-009; the note's label sentence
    # (HOST-002) holds for every candidate offered, the target included.
    kills = frozenset({"HOST-009", "HOST-011"})

    def patches(self) -> tuple[Patch, ...]:
        def list_candidates(target_id: str, *args: Any, **kw: Any) -> list[Candidate]:
            return _list("\x00zoo-nobody", *args, **kw)

        return ((candidates, "list_candidates", list_candidates),)


class NoCwdRanking(Broken):
    name = "no cwd affinity"
    invariant = "Lists candidates newest first without ranking same-cwd sessions ahead."
    kills = frozenset({"HOST-009"})

    def patches(self) -> tuple[Patch, ...]:
        return ((candidates, "_rank", lambda candidate_cwd, target_cwd: 0),)


class CancellationIgnored(Broken):
    name = "lookup ignores cancellation"
    invariant = (
        "Finishes discovery after the editor cancelled the lookup instead of settling as cancelled."
    )
    kills = frozenset({"HOST-005"})

    def op_candidates_list(self, args: Mapping[str, Any]) -> Any:
        if args.get("listDelay") == "never":
            return self.reference.call("candidates.list", args)
        return self.reference.call(
            "candidates.list", {k: v for k, v in args.items() if k != "cancelAt"}
        )


class CwdNotSearched(Broken):
    name = "discovery searches ids only"
    invariant = "Matches the query against session ids only, forgetting the cwd filter."
    kills = frozenset({"HOST-003"})
    # The profile restates it: id-or-cwd substring filtering (HOST-011) and its vectors
    # (HOST-009: "els" finds the session in /else).
    collateral_ok = frozenset({"HOST-009", "HOST-011"})

    def patches(self) -> tuple[Patch, ...]:
        def list_candidates(
            target_id: str,
            target_cwd: str | None,
            records: Sequence[SessionRecord],
            query: str = "",
            limit: int = 50,
        ) -> list[Candidate]:
            found = _list(target_id, target_cwd, records, query, limit)  # its validation
            if not query:
                return found
            needle = jsstr.canonical(query).lower()
            every = _list(target_id, target_cwd, records, "", 2**53 - 1)
            return [c for c in every if needle in c.session_id.lower()][:limit]

        return ((candidates, "list_candidates", list_candidates),)


MEMBERS = (
    IdLabels,
    FirstTitle,
    TitleSearch,
    RawControls,
    EscapedUri,
    SelfListed,
    NoCwdRanking,
    CancellationIgnored,
    CwdNotSearched,
)
