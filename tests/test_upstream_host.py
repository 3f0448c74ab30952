"""The upstream adapter on a host's own install, and the committed release sets (D-185, D-186)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_conformance.adapters import upstream
from dsh_conformance.adapters.expectations import builtin_manifest
from dsh_conformance.adapters.upstream import UpstreamUnavailable, host

ROOT = Path(__file__).resolve().parents[1]
SETS_DIR = upstream.ADAPTER_DIR / "sets"
SETS = ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8", "0.1.1-rc.2")
ON_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _package(
    root: Path,
    name: str,
    version: str,
    peers: dict[str, str] | None = None,
    optional: tuple[str, ...] = (),
) -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    data: dict[str, object] = {"name": name, "version": version}
    if peers:
        data["peerDependencies"] = peers
    if optional:
        data["peerDependenciesMeta"] = {p: {"optional": True} for p in optional}
    (folder / "package.json").write_text(json.dumps(data), encoding="utf-8")


def _complete(root: Path, version: str = "0.1.0-rc.8") -> Path:
    for name in host.SHIM_IMPORTS:
        _package(root, name, "4.0.4" if name.endswith("cordis") else version)
    return root


def test_a_complete_install_reports_every_version(tmp_path: Path) -> None:
    modules = _complete(tmp_path / "node_modules", "0.1.0-rc.6")
    _package(modules, "@deepseek-ai/dsh-session-reference", "0.1.0-rc.8")
    found = host.check_install(modules)
    assert found["@deepseek-ai/dsh-agent"] == "0.1.0-rc.6"
    assert found["@deepseek-ai/dsh-session-reference"] == "0.1.0-rc.8"


def test_a_missing_package_is_named(tmp_path: Path) -> None:
    modules = _complete(tmp_path / "node_modules")
    shutil.rmtree(modules / "@deepseek-ai" / "dsh-agent-loop")
    with pytest.raises(UpstreamUnavailable) as info:
        host.check_install(modules)
    assert info.value.reason == "incomplete-install"
    assert info.value.packages == ("@deepseek-ai/dsh-agent-loop",)
    assert "@deepseek-ai/dsh-agent-loop" in str(info.value)


def test_a_missing_peer_is_named_with_who_needs_it(tmp_path: Path) -> None:
    """What the README's old bump steps produced: peers dropped, the shim fails to import."""
    modules = _complete(tmp_path / "node_modules")
    _package(
        modules,
        "@deepseek-ai/dsh-agent",
        "0.1.1-rc.2",
        peers={"@deepseek-ai/dsh-scope": "^0.1.1-rc.2", "@deepseek-ai/dsh-brand": "*"},
        optional=("@deepseek-ai/dsh-brand",),
    )
    with pytest.raises(UpstreamUnavailable) as info:
        host.check_install(modules)
    assert info.value.reason == "incomplete-install"
    assert info.value.packages == ("@deepseek-ai/dsh-scope",)
    assert "@deepseek-ai/dsh-scope (a peer of @deepseek-ai/dsh-agent)" in str(info.value)
    # an optional peer may be absent; a present one is enough (its range is not enforced:
    # partial releases install with --legacy-peer-deps)
    _package(modules, "@deepseek-ai/dsh-scope", "0.1.0-rc.8")
    assert host.check_install(modules)["@deepseek-ai/dsh-scope"] == "0.1.0-rc.8"


def test_a_nested_peer_resolves_like_node(tmp_path: Path) -> None:
    modules = _complete(tmp_path / "node_modules")
    _package(modules, "@deepseek-ai/dsh-agent", "0.1.0-rc.8", peers={"zod": "^4"})
    _package(modules / "@deepseek-ai" / "dsh-agent" / "node_modules", "zod", "4.0.0")
    assert host.check_install(modules)["zod"] == "4.0.0"


def test_an_unsupported_version_is_named(tmp_path: Path) -> None:
    modules = _complete(tmp_path / "node_modules")
    _package(modules, "@deepseek-ai/dsh-session-reference", "0.0.1-rc.1")
    with pytest.raises(UpstreamUnavailable) as info:
        host.check_install(modules)
    assert info.value.reason == "unsupported-version"
    assert info.value.packages == ("@deepseek-ai/dsh-session-reference",)


def test_a_folder_that_differs_from_its_lockfile_is_stale(tmp_path: Path) -> None:
    modules = _complete(tmp_path / "node_modules")
    lock = {"packages": {"node_modules/@deepseek-ai/dsh-llm": {"version": "0.1.1-rc.2"}}}
    (modules / ".package-lock.json").write_text(json.dumps(lock), encoding="utf-8")
    with pytest.raises(UpstreamUnavailable) as info:
        host.check_install(modules)
    assert info.value.reason == "stale-install"
    assert info.value.packages == ("@deepseek-ai/dsh-llm",)


def test_no_such_folder(tmp_path: Path) -> None:
    with pytest.raises(UpstreamUnavailable) as info:
        host.check_install(tmp_path / "nope")
    assert info.value.reason == "no-such-install"


def _fake_node(tmp_path: Path) -> str:
    script = tmp_path / "node"
    script.write_text("#!/bin/sh\necho v20.20.2\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@pytest.mark.parametrize("how", ["option", "environment"])
def test_the_shim_runs_on_the_named_install(
    how: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    modules = _complete(tmp_path / "host" / "node_modules")
    monkeypatch.setenv("DSH_NODE", _fake_node(tmp_path))
    monkeypatch.setenv("DSH_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    if how == "environment":
        monkeypatch.setenv("DSH_UPSTREAM_NODE_MODULES", str(modules))
        argv, folder = upstream.command()
    else:
        monkeypatch.setenv("DSH_UPSTREAM_NODE_MODULES", str(tmp_path / "elsewhere"))
        argv, folder = upstream.command(node_modules=modules)  # the option wins
    assert argv[1] == str(folder / "shim.mjs")
    assert (folder / "node_modules").resolve() == modules.resolve()
    assert (folder / "shim.mjs").read_bytes() == (upstream.ADAPTER_DIR / "shim.mjs").read_bytes()
    assert folder.parent == tmp_path / "cache"
    # a second start reuses the folder
    assert upstream.command(node_modules=modules)[1] == folder


def test_an_incomplete_install_fails_before_node_starts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DSH_NODE", _fake_node(tmp_path))
    monkeypatch.setenv("DSH_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    (tmp_path / "node_modules").mkdir()
    with pytest.raises(UpstreamUnavailable) as info:
        upstream.create(str(tmp_path / "node_modules"))
    assert info.value.reason == "incomplete-install"
    assert "@deepseek-ai/dsh-session-reference" in info.value.packages


def test_the_manifest_applies_to_a_host_install() -> None:
    assert builtin_manifest("upstream:/srv/app/node_modules") == builtin_manifest("upstream")


# --- the committed release sets -------------------------------------------------------------


def _lock(release: str) -> dict[str, dict[str, object]]:
    data = json.loads((SETS_DIR / release / "package-lock.json").read_text(encoding="utf-8"))
    packages: dict[str, dict[str, object]] = data["packages"]
    return packages


@pytest.mark.parametrize("release", SETS)
def test_each_set_pins_its_release_and_names_every_peer(release: str) -> None:
    """Installed with --legacy-peer-deps npm adds no peer: the lockfile must hold them all."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import make_sets
    finally:
        sys.path.pop(0)
    pinned = json.loads((SETS_DIR / release / "package.json").read_text(encoding="utf-8"))
    assert pinned["dependencies"] == make_sets.pins(release)
    packages = _lock(release)
    assert packages[""]["dependencies"] == pinned["dependencies"]
    for name, version in pinned["dependencies"].items():
        assert packages[f"node_modules/{name}"]["version"] == version
    for key, entry in packages.items():
        optional = entry.get("peerDependenciesMeta") or {}
        assert isinstance(optional, dict)
        for peer in entry.get("peerDependencies") or {}:
            if not (optional.get(peer) or {}).get("optional"):
                assert f"node_modules/{peer}" in packages, f"{release}: {key} needs {peer}"
    assert pinned["dependencies"]["@deepseek-ai/dsh-agent"] == release
    text = (SETS_DIR / release / "package-lock.json").read_text(encoding="utf-8")
    assert '"resolved"' not in text, "keep the lockfile free of registry URLs"


def test_the_pinned_set_is_the_adapters_own() -> None:
    own = json.loads((upstream.ADAPTER_DIR / "package-lock.json").read_text(encoding="utf-8"))
    mine = {k: v["version"] for k, v in own["packages"].items() if k}
    theirs = {k: v["version"] for k, v in _lock("0.1.0-rc.8").items() if k}
    assert mine == theirs


def test_the_partial_release_recipe_installs(tmp_path: Path) -> None:
    """The README's recipe (npm ci --legacy-peer-deps of the committed lockfile) on the
    partial 0.1.1-rc.2 release gives an install the adapter accepts, every peer present."""
    npm = shutil.which("npm")
    if npm is None:
        if ON_CI:
            pytest.fail("npm is needed to check the install recipe")
        pytest.skip("npm is not on PATH")
    for name in ("package.json", "package-lock.json"):
        shutil.copy(SETS_DIR / "0.1.1-rc.2" / name, tmp_path / name)
    done = subprocess.run(
        [npm, "ci", "--legacy-peer-deps", "--prefer-offline", "--no-audit", "--no-fund"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = host.check_install(tmp_path / "node_modules")
    assert found["@deepseek-ai/dsh-agent"] == "0.1.1-rc.2"
    assert found["@deepseek-ai/dsh-session-reference"] == "0.1.0-rc.8"
