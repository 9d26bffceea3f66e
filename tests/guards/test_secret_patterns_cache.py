"""The secret guard's prefilter patterns, kept in the per-user cache between processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from patchsmith.runtime import secrets, usercache

STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"  # assembled so no scanner flags this file


@pytest.fixture(name="cache")
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(usercache.CACHE_ENV, str(folder))
    return folder


class TestDenylistCache:
    def test_cached_patterns_are_the_plugins_own(self, cache: Path) -> None:
        """What the cache holds is exactly what the installed plugins' denylists say."""
        first = secrets._denylist_sources()
        again = secrets._denylist_sources()

        assert secrets._denylists_from_plugins() == first == again
        assert 1 == len(list(cache.glob("secret-denylists-*.json")))

    def test_a_malformed_entry_is_rebuilt(self, cache: Path) -> None:
        """A damaged entry is not trusted: the plugins are read again and the entry rewritten."""
        key = secrets._plugins_key()
        assert key is not None
        cache.mkdir()
        for damaged in ('{"not": "a list"}', '[["x"]]', "not json"):
            (cache / key).write_text(damaged, encoding="utf-8")

            assert secrets._denylists_from_plugins() == secrets._denylist_sources()
        stored = json.loads((cache / key).read_text(encoding="utf-8"))
        assert secrets._denylists_from_plugins() == [tuple(item) for item in stored]

    def test_cache_off_reads_the_plugins(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """`PATCHSMITH_CACHE_DIR=off`: no cache, same patterns."""
        monkeypatch.setenv(usercache.CACHE_ENV, "off")

        assert secrets._denylists_from_plugins() == secrets._denylist_sources()

    def test_key_follows_the_installed_plugins(self) -> None:
        """The key names the plugin files, so an upgraded detect-secrets gets a new entry."""
        key = secrets._plugins_key()

        assert key is not None
        assert key.startswith("secret-denylists-") and key.endswith(".json")
        assert key == secrets._plugins_key()

    def test_warm_cache_spares_detect_secrets_until_a_line_looks_like_one(
        self, cache: Path
    ) -> None:
        """With the patterns cached, a clean line loads no detect-secrets; a credential
        still does, and is still found."""
        code = (
            "import sys\n"
            "from patchsmith.runtime.secrets import _findings\n"
            "print(_findings('a.py', ((1, 'name = name.strip()'),)))\n"
            "print('detect_secrets' in sys.modules)\n"
            f"print([f.kind for f in _findings('a.py', ((1, {'k = ' + repr(STRIPE)!r}),))])\n"
        )
        env = {usercache.CACHE_ENV: str(cache), "PATH": "/usr/bin:/bin"}
        run = [sys.executable, "-c", code]
        subprocess.run(run, capture_output=True, text=True, check=True, env=env)

        out = subprocess.run(run, capture_output=True, text=True, check=True, env=env).stdout

        assert ["[]", "False", "['Stripe Access Key']"] == out.split("\n")[:3]


class TestUserCache:
    def test_directory_from_the_environment(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """PATCHSMITH_CACHE_DIR, else XDG_CACHE_HOME/patchsmith, else ~/.cache/patchsmith."""
        monkeypatch.setenv(usercache.CACHE_ENV, "/tmp/x")
        assert Path("/tmp/x") == usercache.cache_dir()
        monkeypatch.setenv(usercache.CACHE_ENV, "OFF")
        assert usercache.cache_dir() is None
        monkeypatch.delenv(usercache.CACHE_ENV)
        monkeypatch.setenv("XDG_CACHE_HOME", "/tmp/xdg")
        assert Path("/tmp/xdg/patchsmith") == usercache.cache_dir()
        monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # ignored, as the spec says
        monkeypatch.setenv("HOME", "/tmp/home")
        assert Path("/tmp/home/.cache/patchsmith") == usercache.cache_dir()

    def test_round_trip(self, cache: Path) -> None:
        """A stored value reads back; an absent one is None."""
        usercache.store_entry("a.json", [["x", 1]])

        assert [["x", 1]] == usercache.load_entry("a.json")
        assert usercache.load_entry("b.json") is None
        assert [] == list(cache.glob(".tmp-*"))

    def test_unwritable_cache_is_skipped(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A cache directory that cannot be made (a file is in the way) is silently skipped."""
        blocker = tmp_path / "file"
        blocker.write_text("x", encoding="utf-8")
        monkeypatch.setenv(usercache.CACHE_ENV, str(blocker / "cache"))

        usercache.store_entry("a.json", [1])

        assert usercache.load_entry("a.json") is None

    def test_unserialisable_value_leaves_no_file(self, cache: Path) -> None:
        """A value JSON cannot hold is not stored, and no temporary file stays behind."""
        usercache.store_entry("a.json", {1j})

        assert [] == list(cache.iterdir())

    def test_off_stores_nothing(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """With the cache off, storing and loading do nothing."""
        monkeypatch.setenv(usercache.CACHE_ENV, "off")

        usercache.store_entry("a.json", [1])

        assert usercache.load_entry("a.json") is None
