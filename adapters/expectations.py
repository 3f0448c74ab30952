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

Conditional entries: ``versions = ">=0.1.0-rc.8"`` (or a list, any of which may match)
limits an entry to the implementation versions its handshake reports.  Each string is a
version specifier set (``packaging``; npm-style ``0.1.0-rc.8`` reads as ``0.1.0rc8``,
pre-releases always match, and order as semver's do: rc.6 < rc.7 < rc.8 < 0.1.1-rc.2;
npm's ``^``/``~`` ranges are not accepted).  ``components = {"@deepseek-ai/dsh-agent" =
">=0.1.1-rc.0"}`` limits it to implementations whose handshake reports those component
versions (``implementation.components``, D-188): every named component must be present
and match.  An entry whose conditions do not match, or whose version or component is
missing or not a version, does not apply: it matches no test and is not stale, and
``--write-expectations`` keeps it as it is.  So one strict manifest per adapter covers
every release the adapter runs (``adapters/expectations/upstream.toml``: the four sets).

What a failure may blame (D-421): ``blames = ["PROJ-004"]`` names the requirement ids a
failure of the matched tests may blame; a failure blaming an id no matching ``xfail``
entry names stays a failure (the gate counts the unnamed ids).  Without ``blames``, any
failure is expected.  A property (Hypothesis) test whose examples found no failure under
a test-id ``xfail`` entry is "expected failure not reproduced" (D-422): it passed, and the
gate lists it without failing, unless the entry says ``strict = true``.

Ids: a requirement id matches every test that cites it; a test id matches that test,
``file.py::test_name`` matches all its parametrizations and ``file.py`` every test in
the file.  Test ids are stable across installs: ``conformance/<file>::<name>[<param>]``.

Reviews (D-199): the meaning of a natural-language text (the advisor framing, the
untrusted-data warning) is judged by a person, never by the suite.  A host records its
review of the exact text the report shows::

    [[review]]
    requirement = "SIDE-007"
    sha256 = "…"                         # the reviewed text's sha256, from the report
    by = "alice@example.org"
    why = "says: explain, change nothing, do not continue the task"

A review stays valid until the text changes (another sha256); a text without one is
listed as a missing review.  Neither fails a verdict.

Statuses: ``unsupported`` skips the matching tests before they run (outcome
``unsupported``, not counted against compliance).  ``xfail`` runs them: a failure of any
kind (fail, error, crash, timeout) is recorded as ``xfail``; a test-id entry whose fixed
test (or strict property) passes is ``xpass``, and a requirement entry none of whose
tests fails is reported as unexpectedly passing.  Both make the run fail, and so does a
*stale* entry, one that matches no test of the suite, so the manifest cannot rot.
``--write-expectations PATH`` regenerates a manifest from a run (keeping the reasons and
links of entries that still apply, naming what each new failure blames); rewriting an
existing file keeps its comments, layout and order (tomlkit) and appends new entries
(adapters/manifest_writer.py).
The schema is spec/schemas/expectations.json.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from attrs import field, frozen

from dsh_conformance.errors import ManifestError

_REQUIREMENT_ID: Final = re.compile(r"[A-Z]+-[0-9]{3}[a-z]?")


def normal_versions(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """An entry's ``versions`` as a tuple of specifier strings (one string reads as one)."""
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def _ids(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(str(item) for item in value)


def normal_components(
    value: Mapping[str, str] | Iterable[tuple[str, str]] | None,
) -> tuple[tuple[str, str], ...]:
    """An entry's ``components`` as sorted ``(package, specifier)`` pairs."""
    if value is None:
        return ()
    pairs = value.items() if isinstance(value, Mapping) else value
    return tuple(sorted((str(k), str(v)) for k, v in pairs))


def _matches(version: str, spec: str) -> bool:
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(version)
    except InvalidVersion:
        return False
    return parsed in SpecifierSet(spec, prereleases=True)


@frozen
class Entry:
    """One manifest entry."""

    id: str
    status: str
    reason: str
    link: str = ""
    versions: tuple[str, ...] = field(default=(), converter=normal_versions)
    #: (component name, version specifier set) pairs that must all match (D-188)
    components: tuple[tuple[str, str], ...] = field(default=(), converter=normal_components)
    #: The requirement ids a failure may blame (D-421): a failure blaming another is
    #: unexpected.  Empty: any.
    blames: tuple[str, ...] = field(default=(), converter=_ids)
    #: For a property test: a run whose examples found no failure is an unexpected pass,
    #: not "expected failure not reproduced" (D-422).  A fixed test is always strict.
    strict: bool = False

    @property
    def expected_blame(self) -> tuple[str, ...]:
        """The ids a failure under this entry alone may blame; empty when any may (an
        entry without ``blames``, as before D-421).  A requirement entry naming others
        names its own id too."""
        if self.is_requirement and self.blames:
            return tuple(dict.fromkeys((self.id, *self.blames)))
        return self.blames

    @property
    def conditional(self) -> bool:
        return bool(self.versions or self.components)

    def applies_to(self, version: str, components: Mapping[str, str] | None = None) -> bool:
        """Whether the entry holds for an implementation reporting *version* and
        *components* (name -> version)."""
        if self.versions and not any(_matches(version, spec) for spec in self.versions):
            return False
        found = components or {}
        return all(name in found and _matches(found[name], spec) for name, spec in self.components)

    @property
    def is_requirement(self) -> bool:
        return bool(_REQUIREMENT_ID.fullmatch(self.id))

    def matches(self, test_id: str, requirements: Iterable[str]) -> bool:
        if self.is_requirement:
            return self.id in requirements
        if test_id == self.id:
            return True
        return test_id.startswith(self.id) and test_id[len(self.id)] in ":["

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "status": self.status, "reason": self.reason}
        if self.link:
            data["link"] = self.link
        if self.versions:
            data["versions"] = self.versions[0] if len(self.versions) == 1 else list(self.versions)
        if self.components:
            data["components"] = dict(self.components)
        if self.blames:
            data["blames"] = list(self.blames)
        if self.strict:
            data["strict"] = True
        return data


@frozen
class Review:
    """A host's review of one natural-language text (D-199): valid while the text's
    sha256 is the one reviewed."""

    requirement: str
    sha256: str
    by: str
    why: str

    def to_json(self) -> dict[str, str]:
        return {"by": self.by, "why": self.why}


@frozen
class Manifest:
    """A parsed manifest; ``match`` gives the entry that applies to a test."""

    entries: tuple[Entry, ...]
    path: str = ""
    adapter: str = ""
    #: entries set aside because their ``versions`` do not match this implementation
    inactive: tuple[Entry, ...] = ()
    #: ``[[review]]`` tables: texts a person judged to say what a note's sentence asks
    reviews: tuple[Review, ...] = ()

    def review_of(self, requirement: str, sha256: str) -> Review | None:
        """The host's review of the text with *sha256* under *requirement*, if any."""
        for item in self.reviews:
            if item.requirement == requirement and item.sha256 == sha256:
                return item
        return None

    @property
    def versioned(self) -> bool:
        """Whether any entry is conditional (on the version or on a component)."""
        return any(e.conditional for e in self.entries)

    def for_version(self, version: str, components: Mapping[str, str] | None = None) -> Manifest:
        """The manifest as it applies to an implementation reporting *version* and
        *components*."""
        active = tuple(e for e in self.entries if e.applies_to(version, components))
        inactive = tuple(e for e in self.entries if not e.applies_to(version, components))
        return Manifest(active, self.path, self.adapter, self.inactive + inactive, self.reviews)

    def expected_blame(self, test_id: str, requirements: Iterable[str]) -> tuple[str, ...]:
        """The ids a failure of the test may blame under the manifest (D-421): those every
        ``xfail`` entry matching it names; empty (any) when one of them names none."""
        reqs = set(requirements)
        found: list[str] = []
        for entry in self.entries:
            if entry.status == "xfail" and entry.matches(test_id, reqs):
                if not entry.expected_blame:
                    return ()
                found.extend(entry.expected_blame)
        return tuple(dict.fromkeys(found))

    def match(self, test_id: str, requirements: Iterable[str]) -> Entry | None:
        """The applicable entry: test-id entries beat requirement entries, unsupported
        beats xfail."""
        reqs = set(requirements)
        found = [e for e in self.entries if e.matches(test_id, reqs)]
        if not found:
            return None
        found.sort(key=lambda e: (e.is_requirement, e.status != "unsupported"))
        return found[0]


def unexpected_blame(allowed: Sequence[str], blame: Sequence[str]) -> tuple[str, ...]:
    """The ids of *blame* not in *allowed*, what the manifest lets a failure blame
    (``Manifest.expected_blame``); none when *allowed* is empty: any may fail (D-421)."""
    return tuple(r for r in blame if allowed and r not in allowed)


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
        _check_versions(entry, path)
        named = [entry.id] if entry.is_requirement else []
        for rid in [*named, *entry.blames]:
            if known and rid not in known:
                raise ManifestError(
                    "unknown-requirement",
                    f"{path}: {rid} is not a requirement of the catalog"
                    + (f" (in the blames of {entry.id})" if rid != entry.id else ""),
                    hint="fix the id, or run `dsh-conformance spec` to list requirements",
                )
    reviews = tuple(Review(**item) for item in data.get("review", []))
    return Manifest(tuple(entries), path, str(data.get("adapter", "")), reviews=reviews)


def _check_versions(entry: Entry, path: str) -> None:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    specs = [("versions", s) for s in entry.versions]
    specs += [(f"components.{name}", s) for name, s in entry.components]
    for where, spec in specs:
        try:
            SpecifierSet(spec)
        except InvalidSpecifier as exc:
            raise ManifestError(
                "invalid-manifest",
                f"{path or 'manifest'}: {entry.id}: {where} {spec!r} is not a version specifier",
                hint='write e.g. versions = ">=0.1.0-rc.8", ["==0.1.0-rc.7", ">=0.2"] or '
                'components = {"@deepseek-ai/dsh-agent" = ">=0.1.1-rc.0"} (no npm ^ or ~)',
            ) from exc


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
    except UnicodeDecodeError as exc:  # Notepad's UTF-16 with a BOM, Latin-1, a binary
        bom = (
            " (it starts with a UTF-16 byte order mark)"
            if exc.object[:2]
            in (
                b"\xff\xfe",
                b"\xfe\xff",
            )
            else ""
        )
        raise ManifestError(
            "manifest-not-utf8",
            f"{file}: not UTF-8{bom}: {exc.reason} at byte {exc.start}",
            hint="save the manifest as UTF-8 (TOML files are UTF-8)",
        ) from exc
    except IsADirectoryError as exc:
        raise ManifestError(
            "manifest-is-directory", f"{file}: is a directory, not a manifest", exit_status=66
        ) from exc
    except OSError as exc:
        raise ManifestError(
            "manifest-unreadable", f"{file}: {exc.strerror or exc}", exit_status=66
        ) from exc
    return parse_manifest(data, path=str(file), known_requirements=known_requirements)


def builtin_manifest(adapter: str) -> Path | None:
    """The manifest shipped for a built-in adapter kind (``upstream`` …), if any."""
    kind = adapter.split(":", 1)[0]
    candidate = Path(__file__).with_name("expectations") / f"{kind}.toml"
    return candidate if candidate.is_file() else None
