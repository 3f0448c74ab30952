"""Expectation manifests: what an implementation is known to fail or not to support.

A manifest is a TOML file, one per adapter, kept in the suite's repository
(``adapters/expectations/<adapter>.toml``) or passed with ``--expectations PATH``.
It is owned by the suite side, reviewed like code, and strict (decision D-125)::

    # Known gaps of the published upstream packages.
    adapter = "upstream"

    [[expect]]
    id = "URI-004"                      # a requirement id …
    status = "xfail"                    # xfail | unsupported
    reason = "rc.8 keeps '=' padding"   # required: why
    link = "https://github.com/…/issues/12"   # optional: where it is tracked

    [[expect]]
    id = "conformance/test_uri.py::test_known_vectors"   # … or a test id
    status = "unsupported"
    reason = "no URI decoding in the published API"

Ids: a requirement id matches every test that cites it; a test id matches that test,
``file.py::test_name`` matches all its parametrizations and ``file.py`` every test in
the file.  Test ids are stable across installs: ``conformance/<file>::<name>[<param>]``.

Statuses: ``unsupported`` skips the matching tests before they run (outcome
``unsupported``, not counted against compliance).  ``xfail`` runs them: a failure of any
kind (fail, error, crash, timeout) is recorded as ``xfail``; a test-id entry whose test
passes is ``xpass``, and a requirement entry none of whose tests fails is reported as
unexpectedly passing.  Both make the run fail, and so does a *stale* entry, one that
matches no test of the suite, so the manifest cannot rot.  ``--write-expectations PATH``
regenerates a manifest from a run (keeping the reasons and links of entries that still
apply).  The schema is spec/schemas/expectations.json.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from attrs import frozen

from dsh_conformance.errors import ManifestError

STATUSES: Final = ("xfail", "unsupported")
_REQUIREMENT_ID: Final = re.compile(r"[A-Z]+-[0-9]{3}[a-z]?")


@frozen
class Entry:
    """One manifest entry."""

    id: str
    status: str
    reason: str
    link: str = ""

    @property
    def is_requirement(self) -> bool:
        return bool(_REQUIREMENT_ID.fullmatch(self.id))

    def matches(self, test_id: str, requirements: Iterable[str]) -> bool:
        if self.is_requirement:
            return self.id in requirements
        if test_id == self.id:
            return True
        return test_id.startswith(self.id) and test_id[len(self.id)] in ":["

    def to_json(self) -> dict[str, str]:
        data = {"id": self.id, "status": self.status, "reason": self.reason}
        if self.link:
            data["link"] = self.link
        return data


@frozen
class Manifest:
    """A parsed manifest; ``match`` gives the entry that applies to a test."""

    entries: tuple[Entry, ...]
    path: str = ""
    adapter: str = ""

    def match(self, test_id: str, requirements: Iterable[str]) -> Entry | None:
        """The applicable entry: test-id entries beat requirement entries, unsupported
        beats xfail."""
        reqs = set(requirements)
        found = [e for e in self.entries if e.matches(test_id, reqs)]
        if not found:
            return None
        found.sort(key=lambda e: (e.is_requirement, e.status != "unsupported"))
        return found[0]


def parse_manifest(
    data: Mapping[str, Any], *, path: str = "", known_requirements: Iterable[str] = ()
) -> Manifest:
    """Validate manifest data (spec/schemas/expectations.json) and build a Manifest."""
    import jsonschema

    from dsh_conformance.spec import schema

    errors = sorted(
        jsonschema.Draft202012Validator(schema("expectations.json")).iter_errors(dict(data)),
        key=lambda e: list(map(str, e.absolute_path)),
    )
    if errors:
        lines = [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors]
        raise ManifestError(
            "invalid-manifest",
            f"{path or 'manifest'}: " + "; ".join(lines[:5]),
            hint="see the format in adapters/expectations.py or docs/harness.md",
        )
    entries = [Entry(**item) for item in data.get("expect", [])]
    seen: set[str] = set()
    known = set(known_requirements)
    for entry in entries:
        if entry.id in seen:
            raise ManifestError("duplicate-entry", f"{path}: {entry.id} is listed twice")
        seen.add(entry.id)
        if entry.is_requirement and known and entry.id not in known:
            raise ManifestError(
                "unknown-requirement",
                f"{path}: {entry.id} is not a requirement of the catalog",
                hint="fix the id, or run `dsh-conformance spec` to list requirements",
            )
    return Manifest(tuple(entries), path, str(data.get("adapter", "")))


def load_manifest(path: str | Path, known_requirements: Iterable[str] = ()) -> Manifest:
    """Read and validate a manifest file."""
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ManifestError(
            "no-such-manifest", f"{file}: no such expectation manifest", exit_status=66
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError("manifest-not-toml", f"{file}: {exc}") from exc
    return parse_manifest(data, path=str(file), known_requirements=known_requirements)


def builtin_manifest(adapter: str) -> Path | None:
    """The manifest shipped for a built-in adapter kind (``upstream`` …), if any."""
    kind = adapter.split(":", 1)[0]
    candidate = Path(__file__).with_name("expectations") / f"{kind}.toml"
    return candidate if candidate.is_file() else None


def _toml_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0xD800 else "\\ufffd")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def render_manifest(entries: Sequence[Entry], *, adapter: str = "", comment: str = "") -> str:
    """A manifest file for *entries*, sorted by id (stable diffs)."""
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    if adapter:
        lines.append(f"adapter = {_toml_string(adapter)}")
    for entry in sorted(entries, key=lambda e: e.id):
        lines += ["", "[[expect]]"]
        for key, value in entry.to_json().items():
            lines.append(f"{key} = {_toml_string(value)}")
    return "\n".join(lines) + "\n"
