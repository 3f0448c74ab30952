"""Regenerate the release sets under ``adapters/upstream/sets/<set>/`` (package.json + lock).

A *set* is what a host team gets when it installs one published release of the
``@deepseek-ai/dsh-*`` family: every package the shim loads, and every peer of those,
pinned to the newest version published at or before the release (D-186).  Releases are
partial: ``dsh-session-reference`` exists only at 0.1.0-rc.8, ``dsh-agent-loop`` skipped
rc.7, and 0.1.1-rc.2 holds only agent, session, llm and invariants.  The peer ranges of a
partial set do not resolve (``^0.1.0-rc.8`` excludes both rc.6 and 0.1.1-rc.2), so every set
is installed with ``--legacy-peer-deps`` and names every peer itself (npm then installs no
peer on its own: an unnamed peer is simply missing, and the shim fails to import).

    python tools/make_sets.py            # rewrite every set's package.json and lockfile
    python tools/make_sets.py 0.1.1-rc.2 # one set

Needs npm and the registry (``npm install --package-lock-only``); nothing is installed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
SETS_DIR = ROOT / "adapters" / "upstream" / "sets"

#: Every package of a set: the ones the shim imports and all their non-optional peers.
PACKAGES = (
    "dsh-agent",
    "dsh-agent-loop",
    "dsh-attachment",
    "dsh-brand",
    "dsh-code-runtime",
    "dsh-commands",
    "dsh-compaction",
    "dsh-invariants",
    "dsh-llm",
    "dsh-output-retention",
    "dsh-scope",
    "dsh-session",
    "dsh-session-persistence",
    "dsh-session-projection",
    "dsh-session-query",
    "dsh-session-reference",
    "dsh-session-title",
    "dsh-settings",
    "dsh-system-prompt",
    "dsh-timeout",
    "dsh-tools",
    "dsh-typert-protocol",
    "dsh-user-approval",
)
#: Published 0.1.x versions of each package (``npm view @deepseek-ai/<name> versions``,
#: 2026-12); a package missing from a release takes its newest earlier version, and
#: session-reference and output-retention (first published at rc.8) take rc.8.
PUBLISHED = {
    "dsh-agent": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8", "0.1.1-rc.2"),
    "dsh-agent-loop": ("0.1.0-rc.6", "0.1.0-rc.8"),
    "dsh-attachment": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8"),
    "dsh-brand": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8"),
    "dsh-code-runtime": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8"),
    "dsh-commands": ("0.1.0-rc.6", "0.1.0-rc.8"),
    "dsh-compaction": ("0.1.0-rc.6", "0.1.0-rc.8"),
    "dsh-invariants": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8", "0.1.1-rc.2"),
    "dsh-llm": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8", "0.1.1-rc.2"),
    "dsh-output-retention": ("0.1.0-rc.8",),
    "dsh-scope": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8"),
    "dsh-session": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8", "0.1.1-rc.2"),
    "dsh-session-persistence": ("0.1.0-rc.6", "0.1.0-rc.8"),
    "dsh-session-projection": ("0.1.0-rc.6", "0.1.0-rc.8"),
    "dsh-session-query": ("0.1.0-rc.6", "0.1.0-rc.8"),
    "dsh-session-reference": ("0.1.0-rc.8",),
    "dsh-session-title": ("0.1.0-rc.6", "0.1.0-rc.8"),
    "dsh-settings": ("0.1.0-rc.6", "0.1.0-rc.8"),
    "dsh-system-prompt": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8"),
    "dsh-timeout": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8"),
    "dsh-tools": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8"),
    "dsh-typert-protocol": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8"),
    "dsh-user-approval": ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8"),
}
#: The runtime packages every set shares (outside the dsh release train).
SHARED = {"@deepseek-ai/cordis": "4.0.4", "@deepseek-ai/schemastery": "3.18.4"}
#: The published releases, oldest first; ``0.1.0-rc.8`` is the adapter's own pin.
SETS = ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8", "0.1.1-rc.2")


def _key(version: str) -> Version:
    return Version(version)  # npm's 0.1.0-rc.8 reads as 0.1.0rc8: the same order


def pins(release: str) -> dict[str, str]:
    """The exact version of every package in the set of *release*."""
    out = dict(SHARED)
    for name in PACKAGES:
        published = PUBLISHED[name]
        earlier = [v for v in published if _key(v) <= _key(release)]
        out[f"@deepseek-ai/{name}"] = earlier[-1] if earlier else published[0]
    return dict(sorted(out.items()))


def package_json(release: str) -> dict[str, object]:
    return {
        "name": f"dsh-upstream-set-{release}",
        "version": "0.0.0",
        "private": True,
        "type": "module",
        "description": f"the @deepseek-ai/dsh-* packages as published at {release}, every peer "
        "named (install with npm ci --legacy-peer-deps; tools/make_sets.py writes this file)",
        "license": "MIT",
        "dependencies": pins(release),
    }


def write_set(release: str, npm: str) -> Path:
    folder = SETS_DIR / release
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(package_json(release), indent=2) + "\n"
    (folder / "package.json").write_text(text, encoding="utf-8")
    (folder / "package-lock.json").unlink(missing_ok=True)
    subprocess.run(
        [npm, "install", "--package-lock-only", "--legacy-peer-deps", "--no-audit", "--no-fund"],
        cwd=folder,
        check=True,
    )
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", default=list(SETS), help="releases to write")
    args = parser.parse_args(argv)
    npm = shutil.which("npm")
    if npm is None:
        print("make_sets: npm is not on PATH", file=sys.stderr)
        return 69
    for release in args.sets:
        if release not in SETS:
            print(f"make_sets: {release} is not one of {', '.join(SETS)}", file=sys.stderr)
            return 64
        print(write_set(release, npm).relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
