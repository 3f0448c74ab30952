"""Installing and locating the upstream adapter's Node side (no Node needed for most)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from dsh_conformance.adapters import upstream
from dsh_conformance.adapters.registry import known
from dsh_conformance.adapters.upstream import UpstreamUnavailable

ROOT = Path(__file__).resolve().parents[1]
PINNED = {
    "@deepseek-ai/cordis": "4.0.4",
    "@deepseek-ai/schemastery": "3.18.4",
    **{
        f"@deepseek-ai/dsh-{name}": "0.1.0-rc.8"
        for name in (
            "agent",
            "agent-loop",
            "compaction",
            "llm",
            "output-retention",
            "session",
            "session-query",
            "session-reference",
            "system-prompt",
            "tools",
        )
    },
}


def test_upstream_is_a_registered_adapter() -> None:
    assert "upstream" in known()


def test_package_json_pins_the_release_set_exactly() -> None:
    assert upstream.pinned_versions() == PINNED
    data = json.loads((upstream.ADAPTER_DIR / "package.json").read_text(encoding="utf-8"))
    assert data["private"] is True
    assert data["type"] == "module"


def test_lockfile_matches_package_json_and_names_no_registry() -> None:
    text = (upstream.ADAPTER_DIR / "package-lock.json").read_text(encoding="utf-8")
    lock = json.loads(text)
    assert lock["lockfileVersion"] == 3
    root = lock["packages"][""]
    assert root["dependencies"] == PINNED
    for name, version in PINNED.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    assert '"resolved"' not in text, "keep the lockfile free of registry URLs"
    assert not re.search(r"registry\.|npmjs", text)
    # Unscoped cordis/schemastery are a different upstream and must never be installed.
    assert "node_modules/cordis" not in lock["packages"]
    assert "node_modules/schemastery" not in lock["packages"]


def test_node_modules_is_never_committed() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "node_modules/" in ignored


def test_lock_hash_depends_on_both_files(tmp_path: Path) -> None:
    for name in upstream.NODE_FILES:
        shutil.copy(upstream.ADAPTER_DIR / name, tmp_path / name)
    before = upstream.lock_hash(tmp_path)
    assert before == upstream.lock_hash()
    (tmp_path / "package.json").write_text("{}", encoding="utf-8")
    assert upstream.lock_hash(tmp_path) != before


def test_missing_node_is_a_typed_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DSH_NODE", str(tmp_path / "no-such-node"))
    with pytest.raises(UpstreamUnavailable) as info:
        upstream.node_executable()
    assert info.value.reason == "node-missing"
    assert info.value.code == "DSH_ADAPTER_FAILURE"
    assert info.value.hint


def test_empty_path_means_no_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_NODE", raising=False)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(UpstreamUnavailable) as info:
        upstream.node_executable()
    assert info.value.reason == "node-missing"


def _fake_node(tmp_path: Path, version: str) -> str:
    script = tmp_path / "node"
    script.write_text(f"#!/bin/sh\necho {version}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_old_node_is_a_typed_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DSH_NODE", _fake_node(tmp_path, "v18.19.0"))
    with pytest.raises(UpstreamUnavailable) as info:
        upstream.node_executable()
    assert info.value.reason == "node-too-old"
    assert "20.6" in str(info.value)


def test_node_20_6_is_enough(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    node = _fake_node(tmp_path, "v20.6.0")
    monkeypatch.setenv("DSH_NODE", node)
    assert upstream.node_executable() == node


def test_missing_npm_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_NPM", raising=False)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(UpstreamUnavailable) as info:
        upstream.npm_executable()
    assert info.value.reason == "npm-missing"


def test_cache_root_honours_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DSH_CONFORMANCE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert upstream.cache_root() == tmp_path / "xdg" / "dsh-conformance"
    monkeypatch.setenv("DSH_CONFORMANCE_CACHE", str(tmp_path / "own"))
    assert upstream.cache_root() == tmp_path / "own"


def test_install_problems_names_missing_and_wrong_versions(tmp_path: Path) -> None:
    shutil.copy(upstream.ADAPTER_DIR / "package.json", tmp_path / "package.json")
    problems = upstream.install_problems(tmp_path)
    assert len(problems) == len(PINNED)
    fake = tmp_path / "node_modules" / "@deepseek-ai" / "cordis"
    fake.mkdir(parents=True)
    (fake / "package.json").write_text('{"version": "4.0.1"}', encoding="utf-8")
    assert any("4.0.1" in p and "4.0.4" in p for p in upstream.install_problems(tmp_path))


def test_install_disabled_without_node_modules_is_a_typed_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Simulate a checkout without node_modules by pointing the adapter at a copy.
    for source in upstream._node_sources():
        shutil.copy(source, tmp_path / source.name)
    monkeypatch.setattr(upstream, "ADAPTER_DIR", tmp_path)
    with pytest.raises(UpstreamUnavailable) as info:
        upstream.runtime_dir(install=False)
    assert info.value.reason == "not-installed"
    assert "npm ci --prefix adapters/upstream" in (info.value.hint or "")


def test_stale_node_modules_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for source in upstream._node_sources():
        shutil.copy(source, tmp_path / source.name)
    (tmp_path / "node_modules").mkdir()
    monkeypatch.setattr(upstream, "ADAPTER_DIR", tmp_path)
    with pytest.raises(UpstreamUnavailable) as info:
        upstream.runtime_dir()
    assert info.value.reason == "stale-install"


def test_failed_npm_ci_leaves_no_cache_entry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    npm = tmp_path / "npm"
    npm.write_text("#!/bin/sh\necho 'npm ERR! simulated failure' >&2\nexit 1\n", encoding="utf-8")
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("DSH_NPM", str(npm))
    monkeypatch.setenv("DSH_NODE", _fake_node(tmp_path, "v20.20.2"))
    monkeypatch.setenv("DSH_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(UpstreamUnavailable) as info:
        upstream.install_into_cache()
    assert info.value.reason == "install-failed"
    assert "simulated failure" in str(info.value)
    assert os.listdir(tmp_path / "cache") == []


def test_wheel_install_runs_npm_ci_in_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An installed wheel has no node_modules: the cache gets a copy and one npm ci."""
    problems = upstream.install_problems(upstream.ADAPTER_DIR)
    if problems:
        reason = "needs adapters/upstream/node_modules (npm ci --prefix adapters/upstream)"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"{reason}: {problems[0]}")
        pytest.skip(reason)
    calls: list[Path] = []

    def fake_npm_ci(folder: Path) -> None:
        calls.append(folder)
        shutil.copytree(
            upstream.ADAPTER_DIR / "node_modules", folder / "node_modules", symlinks=True
        )

    monkeypatch.setattr(upstream, "_run_npm_ci", fake_npm_ci)
    monkeypatch.setenv("DSH_NODE", _fake_node(tmp_path, "v20.20.2"))
    monkeypatch.setenv("DSH_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    first = upstream.install_into_cache()
    assert first == tmp_path / "cache" / f"upstream-{upstream.lock_hash()}"
    assert (first / "shim.mjs").read_bytes() == (upstream.ADAPTER_DIR / "shim.mjs").read_bytes()
    assert upstream.install_into_cache() == first
    assert len(calls) == 1, "a complete cache entry is reused"
