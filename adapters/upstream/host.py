"""The upstream adapter on a host's own ``node_modules`` (D-185).

A host team gating its upgrades runs the suite on the install it ships, not on this
project's pins.  The shim is copied into a cache folder whose ``node_modules`` is a link to
the host's folder; Node's resolver then finds every package (and each package its peers)
exactly as the host's code would.  Before starting Node, the install is checked so that a
broken one fails with the package named, not with ``ERR_MODULE_NOT_FOUND`` in a stderr tail:

* every package the shim imports, and every non-optional peer of those (transitively),
  resolves the way Node resolves it (``node_modules`` folders upwards from the importer's
  real path, so npm's flat layout and pnpm's nested one both work);
* each is at least the first release line the shim speaks (``SUPPORTED``);
* when npm's hidden lockfile (``node_modules/.package-lock.json``) is there, the installed
  versions are the ones it records (a folder edited by hand or half-updated is *stale*).

The versions themselves are not pinned: whatever the install holds is what runs, and the
handshake reports every one of them (``implementation.components``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from packaging.version import InvalidVersion, Version

#: The packages ``shim.mjs`` and its op modules import.
SHIM_IMPORTS: Final = (
    "@deepseek-ai/cordis",
    "@deepseek-ai/dsh-agent",
    "@deepseek-ai/dsh-agent-loop",
    "@deepseek-ai/dsh-compaction",
    "@deepseek-ai/dsh-llm",
    "@deepseek-ai/dsh-session",
    "@deepseek-ai/dsh-session-query",
    "@deepseek-ai/dsh-session-reference",
    "@deepseek-ai/dsh-system-prompt",
    "@deepseek-ai/dsh-tools",
)
#: The oldest version of a package the shim works with: session-reference's resolver
#: API arrived in 0.1.0-rc.8 (0.0.1-rc.1 has another service); the rest of the 0.1 line
#: starts at rc.6, the oldest published set.
SUPPORTED: Final[Mapping[str, str]] = {
    "@deepseek-ai/cordis": "4.0.0",
    "@deepseek-ai/dsh-session-reference": "0.1.0-rc.8",
}
_DSH_MINIMUM: Final = "0.1.0-rc.6"
_LINK: Final = "node_modules"


def _error(reason: str, message: str, hint: str, packages: Iterable[str]) -> Exception:
    from dsh_conformance.adapters.upstream import UpstreamUnavailable

    return UpstreamUnavailable(reason, message, hint=hint, packages=tuple(packages))


def _manifest(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def resolve(name: str, start: Path) -> Path | None:
    """The folder Node loads package *name* from when imported by a file in *start*."""
    for base in (start, *start.parents):
        candidate = base / name if base.name == _LINK else base / _LINK / name
        if (candidate / "package.json").is_file():
            return candidate
    return None


def _minimum(name: str) -> str | None:
    if name in SUPPORTED:
        return SUPPORTED[name]
    return _DSH_MINIMUM if name.startswith("@deepseek-ai/dsh-") else None


def _too_old(version: str, minimum: str) -> bool:
    try:
        return Version(version) < Version(minimum)
    except InvalidVersion:
        return True


def check_install(node_modules: Path) -> dict[str, str]:
    """Check *node_modules* for the shim; the version of every package it reached.

    Raises ``UpstreamUnavailable`` (``no-such-install``, ``incomplete-install``,
    ``unsupported-version`` or ``stale-install``) naming every package at fault.
    """
    root = node_modules.resolve()
    if not root.is_dir():
        raise _error(
            "no-such-install",
            f"{node_modules} is not a folder (the host's node_modules was expected)",
            "pass the node_modules folder of an npm install of @deepseek-ai/dsh-session-reference",
            (),
        )
    found: dict[str, str] = {}
    missing: list[str] = []
    old: list[str] = []
    queue: list[tuple[str, Path, str]] = [(name, root, "") for name in SHIM_IMPORTS]
    seen: set[tuple[str, Path]] = set()
    while queue:
        name, start, wanted_by = queue.pop(0)
        if (name, start) in seen:
            continue
        seen.add((name, start))
        folder = resolve(name, start)
        data = _manifest(folder) if folder is not None else None
        if folder is None or data is None:
            missing.append(f"{name} (a peer of {wanted_by})" if wanted_by else name)
            continue
        version = str(data.get("version", ""))
        found.setdefault(name, version)
        minimum = _minimum(name)
        if minimum is not None and _too_old(version, minimum):
            old.append(f"{name} is {version or 'unversioned'}, the shim needs >= {minimum}")
        optional = data.get("peerDependenciesMeta") or {}
        real = folder.resolve()  # peers resolve from where the package really lives
        for peer in sorted(data.get("peerDependencies") or {}):
            if not (optional.get(peer) or {}).get("optional"):
                queue.append((peer, real, name))
    if missing:
        raise _error(
            "incomplete-install",
            f"{node_modules} lacks " + ", ".join(sorted(set(missing))),
            "install every package and peer the release needs; a partial release needs "
            "npm install --legacy-peer-deps with every peer named (adapters/upstream/README.md)",
            sorted({m.split(" ")[0] for m in missing}),
        )
    if old:
        raise _error(
            "unsupported-version",
            f"{node_modules}: " + "; ".join(old),
            "the upstream adapter speaks the 0.1 line from 0.1.0-rc.6 (session-reference "
            "from 0.1.0-rc.8)",
            [o.split(" ")[0] for o in old],
        )
    stale = _stale(root, found)
    if stale:
        raise _error(
            "stale-install",
            f"{node_modules} does not match its lockfile: " + "; ".join(stale),
            "rerun npm ci in the host's project",
            [s.split(" ")[0] for s in stale],
        )
    return dict(sorted(found.items()))


def _stale(root: Path, found: Mapping[str, str]) -> list[str]:
    """Packages whose installed version differs from npm's hidden lockfile, if any."""
    try:
        lock = json.loads((root / ".package-lock.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    packages = lock.get("packages") if isinstance(lock, dict) else None
    if not isinstance(packages, dict):
        return []
    out = []
    for name, version in found.items():
        entry = packages.get(f"node_modules/{name}")
        if isinstance(entry, dict) and entry.get("version") not in (None, version):
            out.append(f"{name} is {version}, the lockfile records {entry['version']}")
    return out


def host_runtime_dir(node_modules: Path, cache: Path, sources: Iterable[Path]) -> Path:
    """A folder holding the shim with ``node_modules`` linked to the host's install."""
    check_install(node_modules)
    real = node_modules.resolve()
    key = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    folder = cache / f"upstream-host-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    for source in sources:
        if source.suffix != ".mjs":
            continue
        copy = folder / source.name
        if not copy.exists() or copy.read_bytes() != source.read_bytes():
            shutil.copy2(source, copy)
    link = folder / _LINK
    if link.is_symlink() and Path(os.readlink(link)) == real:
        return folder
    if link.is_symlink():
        link.unlink()
    elif link.exists():
        shutil.rmtree(link)
    try:
        link.symlink_to(real, target_is_directory=True)
    except FileExistsError:  # another run linked it first; fine when it links here too
        if not (link.is_symlink() and Path(os.readlink(link)) == real):
            raise
    return folder
