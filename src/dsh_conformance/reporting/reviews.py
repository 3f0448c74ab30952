"""Texts a person reviews against a note's sentence (checks.review, D-199): never a
failure, listed in every report until the manifest records a review."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import frozen

from dsh_conformance.record import RunRecord


@frozen
class ReviewItem:
    """One text a person must judge against a note's sentence (checks.review, D-199)."""

    requirement: str
    sha256: str
    text: str
    sentence: str
    hints: tuple[str, ...]
    #: The host's review from its manifest (``{by, why}``), or None: a missing review.
    review: Mapping[str, str] | None
    tests: tuple[str, ...]
    #: sha256s the manifest reviewed under the same requirement while this text has none:
    #: the text changed since its review (the review no longer applies).
    stale: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "requirement": self.requirement,
            "sha256": self.sha256,
            "text": self.text,
            "sentence": self.sentence,
            "hints": list(self.hints),
            "review": dict(self.review) if self.review is not None else None,
            "tests": list(self.tests),
            "stale": list(self.stale),
        }


def stale_note(item: ReviewItem) -> str:
    """Why a text with a review of its requirement in the manifest still has none."""
    return (
        "changed since its review: the manifest reviewed another text "
        f"(sha256 {', '.join(item.stale)}); read this one and record it"
    )


def review_state(item: ReviewItem) -> str:
    """One line on whether a host's review covers *item* (D-199), for every report."""
    if item.review is not None:
        return f"reviewed by {item.review.get('by')}: {item.review.get('why')}"
    state = f"missing (sha256 {item.sha256})"
    return f"{state}; {stale_note(item)}" if item.stale else state


def review_items(record: RunRecord) -> list[ReviewItem]:
    """Every distinct (requirement, text) a test asked a person to review, in run order."""
    found: dict[tuple[str, str], ReviewItem] = {}
    for test in record.tests:
        for item in test.reviews:
            key = (str(item.get("requirement")), str(item.get("sha256")))
            known = found.get(key)
            if known is not None:
                found[key] = ReviewItem(
                    known.requirement,
                    known.sha256,
                    known.text,
                    known.sentence,
                    known.hints,
                    known.review,
                    (*known.tests, test.nodeid),
                    known.stale,
                )
                continue
            found[key] = ReviewItem(
                requirement=key[0],
                sha256=key[1],
                text=str(item.get("text", "")),
                sentence=str(item.get("sentence", "")),
                hints=tuple(str(h) for h in item.get("hints", ())),
                review=item.get("review"),
                tests=(test.nodeid,),
                stale=tuple(str(sha) for sha in item.get("stale", ())),
            )
    return list(found.values())
