"""Test-suite settings decided once: hypothesis profiles for local runs and CI."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    # CI draws the same examples every run, so a red CI always reproduces; the dev profile
    # keeps exploring new ones.
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("dev", deadline=None, max_examples=50)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


_MADE_CACHE: list[str] = []


def pytest_configure(config: object) -> None:
    """Keep the per-user cache (derived data such as the secret guard's patterns) out of ~."""
    import tempfile

    if "PATCHSMITH_CACHE_DIR" not in os.environ:
        _MADE_CACHE.append(tempfile.mkdtemp(prefix="patchsmith-cache-"))
        os.environ["PATCHSMITH_CACHE_DIR"] = _MADE_CACHE[-1]
    # The trust store too: `patchsmith trust` in a test never writes the user's config.
    _MADE_CACHE.append(tempfile.mkdtemp(prefix="patchsmith-config-"))
    os.environ["PATCHSMITH_CONFIG_DIR"] = _MADE_CACHE[-1]


def pytest_unconfigure(config: object) -> None:
    """Remove the cache folder this run made (a run given one keeps it)."""
    import shutil

    for folder in _MADE_CACHE:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _trust_test_repositories(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Repositories the tests make (under pytest's base temp dir) may run their programs.

    The user's own opt-in, `$PATCHSMITH_TRUSTED_PATHS`, as a CI machine would set it;
    the trust tests remove it to see the untrusted side.
    """
    monkeypatch.setenv("PATCHSMITH_TRUSTED_PATHS", str(tmp_path_factory.getbasetemp()))
    yield
