"""Reviews: the meaning of natural-language text, asked of a person (issue 25, D-199).

A program cannot decide what a sentence means; a test asks for a review and the harness
takes the requests per test.  Split from ``checks`` (issue 44); re-exported there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from dsh_conformance.ran import ran

#: Reviews requested by the running test, taken by the harness when it ends.
_REVIEWS: list[dict[str, Any]] = []


def text_sha256(text: str) -> str:
    """The sha256 a host's review names: of the text's UTF-8 bytes (a lone surrogate as
    its three WTF-8 bytes, so no two texts share a digest)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def review(requirement: str, text: str, hints: Sequence[str] = ()) -> None:
    """Ask a person whether *text* says what *requirement*'s sentence of a note asks (D-199).

    A program cannot decide what a sentence means, so this never passes or fails: the
    report shows *text* beside the sentence (its clause, else its quote, from the
    catalog) with *hints* (what a keyword reading missed), and the host's manifest
    records a review of exactly this text (its sha256).
    """
    from dsh_conformance.spec import load_catalog

    req = load_catalog().requirements[requirement]
    ran(requirement)  # asking for a review is all a test does for it, as when it passes
    sentence = str(getattr(req, "clause", "") or req.quote)
    item = {
        "requirement": requirement,
        "sha256": text_sha256(text),
        "text": text,
        "sentence": sentence,
        "hints": list(hints),
    }
    if item not in _REVIEWS:
        _REVIEWS.append(item)


def take_reviews() -> list[dict[str, Any]]:
    """The reviews requested since the last call (the harness calls it per test)."""
    taken = list(_REVIEWS)
    _REVIEWS.clear()
    return taken
