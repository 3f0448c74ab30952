"""No seed check computes what it expects with the reference's own choices, unlisted
(issue 45 item 3, D-525).

A seed check reads the host's own result; where it still computes an expectation with the
reference model (a ``dsh_conformance.model`` or ``adapters.reference`` import), the
``oracle`` fixture, or the generator's projection of a session (``SessionCase.expected``,
which makes D-31's choices: blocks joined with a newline, empty items dropped), that use
is listed here with why it is a sentence of a note -- or why only profile ids read it.
The scan is static (every conformance module's functions that blame a seed id), so a new
such use fails this test until it is replaced by a reading of the host's result or
listed with its sentence.

Catches: RET-002 finding "the newest message" with the reference's projection (a host with
its own joining or empty items failed it); a new seed check comparing with the oracle.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

from dsh_conformance.spec import load_catalog

ROOT = Path(__file__).resolve().parents[1] / "conformance"
CHECKERS: Final = frozenset({"expect", "expect_equal", "check", "fail", "fail_all", "expect_error"})
MODEL_MODULES: Final = ("dsh_conformance.model", "dsh_conformance.adapters.reference")

#: (module, function) -> why what it computes with the reference is a sentence of a note,
#: or read by profile ids only.
LISTED: Final = {
    ("test_uri", "test_encode_is_scheme_plus_base64url_of_json_stringify"): (
        "jsstr.quote is JSON.stringify of a string: the note's own definition "
        "'dsh-session:<base64url(JSON.stringify(sessionId))>' (seed 000 'Decision'); jsstr "
        "is the JavaScript-string core held to verified vectors (tests/test_jsstr.py), not a "
        "choice of the reference"
    ),
    ("test_mentions", "test_references_come_only_from_canonical_uris_in_the_text"): (
        "jsstr.quote_bytes builds the canonical payload the note defines (JSON.stringify then "
        "base64url: 'whose decode must still be canonical'), and canonical makes the inputs "
        "JavaScript strings; nothing of the reference's parser"
    ),
    ("test_prepare", "test_context_framing_and_data"): (
        "case.expected is read for statistics, for ENV-005's compacted flag (whether the "
        "source holds a current compact checkpoint: the note's 'checkpoint user messages "
        "carrying the canonical source') and for ENV-010's exact data object (profile); the "
        "seed checks read the typed sources or the rendering"
    ),
    ("test_projection", "test_projection_keeps_exactly_what_the_seed_keeps"): (
        "PROJ-001 asks that each message the note keeps is there, in order, by role and "
        "checkpoint flag, its text up to whitespace (missing_in_order): extra items and items "
        "without text are the host's (D-256, D-524); the exact texts, D-31's joining, are "
        "PROJ-006 (profile)"
    ),
    ("test_retention", "test_retention_properties"): (
        "RET-002 and RET-003 read the host's own uncapped projection (own_projection, "
        "D-523); case.expected gives RET-002 only which messages are the current compact "
        "checkpoints (the note's: 'checkpoint user messages carrying the canonical source'), "
        "their texts compared up to whitespace or as cuts; the rest of it is read by profile "
        "ids only (RET-005..RET-014, RET-007's counts) and for statistics"
    ),
}


def _model_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        module = node.module if isinstance(node, ast.ImportFrom) else None
        if module and module.startswith(MODEL_MODULES):
            names |= {a.asname or a.name for a in node.names}  # type: ignore[attr-defined]
    return names


def _blamed(fn: ast.AST) -> set[str]:
    ids: set[str] = set()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        first = node.args[0]
        if name in CHECKERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
            ids.add(first.value)
    return ids


def reference_readings() -> dict[tuple[str, str], tuple[list[str], list[str]]]:
    """(module, function) -> (what of the reference it uses, the seed ids it blames)."""
    catalog = load_catalog().requirements
    found: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for path in sorted(ROOT.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        model = _model_names(tree)
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
            attrs = {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)}
            uses = sorted(f"model {n}" for n in names & model)
            uses += ["the oracle fixture"] * bool({"oracle"} & (names | attrs))
            uses += ["SessionCase.expected"] * ("expected" in attrs)
            seed = sorted(
                r for r in _blamed(fn) if getattr(catalog.get(r), "verdict", "") == "seed"
            )
            if uses and seed:
                found[(path.stem, fn.name)] = (uses, seed)
    return found


def test_every_seed_check_computing_with_the_reference_is_listed_with_its_sentence() -> None:
    found = reference_readings()
    unlisted = {k: v for k, v in found.items() if k not in LISTED}
    assert not unlisted, (
        "a seed check computes what it expects with the reference: read the host's own "
        f"result instead, or list it with the note's sentence it computes: {unlisted}"
    )
    stale = sorted(set(LISTED) - set(found))
    assert not stale, f"listed, but no longer a seed check using the reference: {stale}"


def test_no_seed_check_compares_with_the_oracle() -> None:
    """The differential checks against the reference model cite REF-* only."""
    uses = {k: v for k, v in reference_readings().items() if "the oracle fixture" in v[0]}
    assert not uses, uses
