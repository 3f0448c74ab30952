"""The ``upstream`` adapter: the published ``@deepseek-ai/dsh-*`` packages behind a Node shim.

The Node side (``shim.mjs`` and ``ops-*.mjs`` next to this file) speaks the adapter
protocol over JSON lines; ``SubprocessAdapter`` drives it.  Its npm dependencies are
pinned in ``package.json`` + ``package-lock.json`` and installed with ``npm ci``:

* in a checkout, ``npm ci --prefix adapters/upstream`` puts ``node_modules`` next to the
  shim, and the adapter runs there;
* from an installed wheel (no ``node_modules``), the first use copies the Node files into a
  user cache folder keyed by the lockfile hash and runs ``npm ci`` there once (D-141);
* against a host's own install (``--adapter upstream:/path/to/node_modules`` or
  ``$DSH_UPSTREAM_NODE_MODULES``), the shim runs from a cache folder whose ``node_modules``
  is a link to that install: whatever versions it holds, checked only for completeness
  (every package the shim imports and each of their peers present) and for a supported
  release line (D-185).

Missing or too old ``node``/``npm`` and failed installs raise ``UpstreamUnavailable`` with
a stable ``reason`` and a hint, never a bare ``FileNotFoundError``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from dsh_conformance.adapters.contract import Adapter
from dsh_conformance.adapters.registry import register
from dsh_conformance.model.errors import DshError, ErrorCode

#: The folder holding the shim, ``package.json`` and ``package-lock.json``.
ADAPTER_DIR: Final = Path(__file__).resolve().parent
#: Files copied into the cache folder when installing from a wheel.
NODE_FILES: Final = ("package.json", "package-lock.json")
#: The oldest Node the shim supports (``import.meta.resolve`` without a flag).
MIN_NODE: Final = (20, 6)
#: Seconds ``npm ci`` may take before the install is reported as failed.
INSTALL_TIMEOUT: Final = 600.0

_INSTALL_COMMAND: Final = "npm ci --prefix adapters/upstream --no-audit --no-fund"


class UpstreamUnavailable(DshError):
    """The upstream adapter cannot start on this machine.

    ``reason`` is one of ``node-missing``, ``node-too-old``, ``npm-missing``,
    ``not-installed`` (a checkout without ``node_modules``, installs disabled),
    ``stale-install`` (``node_modules`` does not match the lockfile), ``install-failed``,
    or, for a host's own install (D-185), ``no-such-install`` (the folder is missing),
    ``incomplete-install`` (a package the shim imports, or a peer of one, is missing) and
    ``unsupported-version`` (a package outside the release line the shim speaks).
    ``packages`` names the packages at fault.
    """

    def __init__(
        self, reason: str, message: str, *, hint: str, packages: tuple[str, ...] = ()
    ) -> None:
        super().__init__(ErrorCode.ADAPTER_FAILURE, message, hint=hint)
        self.reason = reason
        self.packages = packages


#: The hint of every "Node is missing or too old" error.
NODE_HINT = "install Node.js 20.6 or newer, or set DSH_NODE to its path"


def node_executable() -> str:
    """Path of ``node`` (``$DSH_NODE`` wins), checked to be at least Node 20.6."""
    node = os.environ.get("DSH_NODE") or shutil.which("node")
    if not node:
        raise UpstreamUnavailable(
            "node-missing",
            "the upstream adapter needs Node.js, and no 'node' is on PATH",
            hint=NODE_HINT,
        )
    version = node_version(node)
    if version < MIN_NODE:
        found = ".".join(map(str, version))
        raise UpstreamUnavailable(
            "node-too-old",
            f"the upstream adapter needs Node.js >= 20.6; {node} is {found}",
            hint=NODE_HINT,
        )
    return node


def node_version(node: str) -> tuple[int, ...]:
    """``node --version`` as a tuple of ints."""
    try:
        out = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise UpstreamUnavailable(
            "node-missing",
            f"cannot run {node} --version: {exc}",
            hint=NODE_HINT,
        ) from exc
    match = re.match(r"v(\d+)\.(\d+)\.(\d+)", out.strip())
    return tuple(int(g) for g in match.groups()) if match else (0,)


def npm_executable() -> str:
    """Path of ``npm`` (``$DSH_NPM`` wins)."""
    npm = os.environ.get("DSH_NPM") or shutil.which("npm")
    if not npm:
        raise UpstreamUnavailable(
            "npm-missing",
            "installing the upstream adapter's packages needs npm, and no 'npm' is on PATH",
            hint="install npm (it ships with Node.js), or set DSH_NPM to its path",
        )
    return npm


def lock_hash(folder: Path = ADAPTER_DIR) -> str:
    """Short SHA-256 of ``package.json`` + ``package-lock.json``: the cache folder key."""
    digest = hashlib.sha256()
    for name in NODE_FILES:
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:16]


def pinned_versions(folder: Path = ADAPTER_DIR) -> dict[str, str]:
    """The exact dependency versions ``package.json`` pins."""
    data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    deps: dict[str, str] = data["dependencies"]
    return deps


def install_problems(folder: Path) -> list[str]:
    """Differences between ``folder/node_modules`` and the pinned versions (empty: good)."""
    problems = []
    for name, version in pinned_versions(folder).items():
        manifest = folder / "node_modules" / name / "package.json"
        try:
            found = json.loads(manifest.read_text(encoding="utf-8")).get("version")
        except (OSError, ValueError):
            problems.append(f"{name} is not installed")
            continue
        if found != version:
            problems.append(f"{name} is {found}, the lockfile pins {version}")
    return problems


def cache_root() -> Path:
    """``$DSH_CONFORMANCE_CACHE``, else ``$XDG_CACHE_HOME/dsh-conformance``, else ~/.cache."""
    explicit = os.environ.get("DSH_CONFORMANCE_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "dsh-conformance"


def _node_sources() -> list[Path]:
    return [ADAPTER_DIR / n for n in NODE_FILES] + sorted(ADAPTER_DIR.glob("*.mjs"))


def _run_npm_ci(folder: Path) -> None:
    npm = npm_executable()
    try:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--omit=dev"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise UpstreamUnavailable(
            "install-failed",
            f"npm ci failed in {folder}: {exc}",
            hint="check network access to the npm registry, then retry",
        ) from exc
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise UpstreamUnavailable(
            "install-failed",
            f"npm ci failed in {folder} (exit {done.returncode}):\n{tail}",
            hint="check network access to the npm registry, then retry",
        )


def install_into_cache() -> Path:
    """Copy the Node files into the user cache and ``npm ci`` there, once per lockfile.

    The install happens in a temporary sibling folder that is renamed into place only when
    complete, so an interrupted install never leaves a half-populated cache entry behind.
    """
    root = cache_root()
    target = root / f"upstream-{lock_hash()}"
    if (target / "node_modules").is_dir() and not install_problems(target):
        _refresh_sources(target)
        return target
    node_executable()
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=root))
    try:
        for source in _node_sources():
            shutil.copy2(source, staging / source.name)
        _run_npm_ci(staging)
        problems = install_problems(staging)
        if problems:
            raise UpstreamUnavailable(
                "install-failed",
                "npm ci did not install the pinned packages: " + "; ".join(problems),
                hint="delete the cache folder and retry",
            )
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        try:
            staging.rename(target)
        except OSError:
            # Another process finished the same install first; use its copy when sound.
            if install_problems(target):
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _refresh_sources(folder: Path) -> None:
    """Keep the cached shim in step with this package's (the lockfile key ignores *.mjs)."""
    for source in sorted(ADAPTER_DIR.glob("*.mjs")):
        copy = folder / source.name
        if not copy.exists() or copy.read_bytes() != source.read_bytes():
            shutil.copy2(source, copy)


def runtime_dir(*, install: bool | None = None) -> Path:
    """The folder to run the shim in, installing into the cache when allowed.

    ``install`` defaults to ``$DSH_UPSTREAM_INSTALL`` != ``0``.  A checkout with
    ``node_modules`` next to the shim runs there (its versions must match the lockfile).
    """
    local = ADAPTER_DIR / "node_modules"
    if local.is_dir():
        problems = install_problems(ADAPTER_DIR)
        if problems:
            raise UpstreamUnavailable(
                "stale-install",
                f"{local} does not match the lockfile: " + "; ".join(problems),
                hint=f"run {_INSTALL_COMMAND}",
            )
        return ADAPTER_DIR
    if install is None:
        install = os.environ.get("DSH_UPSTREAM_INSTALL", "1") != "0"
    if not install:
        raise UpstreamUnavailable(
            "not-installed",
            f"the upstream adapter's npm packages are not installed ({local} is missing)",
            hint=f"run {_INSTALL_COMMAND}, or allow the cache install (DSH_UPSTREAM_INSTALL=1)",
        )
    return install_into_cache()


def command(
    *, install: bool | None = None, node_modules: str | Path | None = None
) -> tuple[list[str], Path]:
    """``argv`` and working folder of the shim process (installing when needed).

    *node_modules* (else ``$DSH_UPSTREAM_NODE_MODULES``) runs the shim on a host's own
    install instead of the pinned one (D-185).
    """
    node = node_executable()
    chosen = node_modules or os.environ.get("DSH_UPSTREAM_NODE_MODULES") or None
    if chosen:
        from dsh_conformance.adapters.upstream.host import host_runtime_dir

        folder = host_runtime_dir(Path(chosen), cache_root(), _node_sources())
    else:
        folder = runtime_dir(install=install)
    return [node, str(folder / "shim.mjs")], folder


def _environment() -> Mapping[str, str]:
    env = dict(os.environ)
    env.pop("NODE_OPTIONS", None)  # a user's --require hooks must not change the library
    return env


def create(rest: str = "") -> Adapter:
    """Factory for ``--adapter upstream`` and ``--adapter upstream:/path/to/node_modules``.

    The suffix names a host's own ``node_modules`` (it wins over
    ``$DSH_UPSTREAM_NODE_MODULES``); the built-in manifest applies either way.
    """
    from dsh_conformance.adapters.subprocess import SubprocessAdapter

    argv, folder = command(node_modules=rest or None)
    timeout = float(os.environ.get("DSH_UPSTREAM_TIMEOUT", "30"))
    adapter: Adapter = SubprocessAdapter(
        argv, cwd=folder, env=_environment(), timeout=timeout, name="upstream"
    )
    return adapter


register(
    "upstream",
    create,
    "the published @deepseek-ai/dsh-* 0.1.0-rc.8 packages through a Node shim "
    "(needs Node >= 20.6; npm ci on first use); upstream:PATH runs a host's own "
    "node_modules (or set DSH_UPSTREAM_NODE_MODULES)",
)

__all__ = [
    "ADAPTER_DIR",
    "UpstreamUnavailable",
    "command",
    "create",
    "install_into_cache",
    "lock_hash",
    "runtime_dir",
]
