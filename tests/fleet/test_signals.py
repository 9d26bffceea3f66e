"""SIGTERM, SIGINT or SIGKILL to `fleet run`: no worker or git process outlives the driver."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from .sample import make_fleet

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

CLI = "import sys; from patchsmith.cli import main; sys.exit(main())"
BOUND = 120.0  # generous: only a process that never ends fails the test


def tagged(tag: str) -> dict[int, str]:
    """Every live process whose environment carries `tag`, with its command line."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if tag.encode() not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            status = (entry / "stat").read_text()
            if status[status.rindex(")") + 2] == "Z":
                continue  # a zombie is dead, only not yet collected
            found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    return found


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.1)
    pytest.fail(f"still waiting after {BOUND:g}s for {what}")


@pytest.fixture(name="slow_run")
def _slow_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`fleet run` over two repositories whose clone never ends (git sleeps), started."""
    listing = make_fleet(tmp_path / "fleet", 2)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text("#!/bin/sh\nexec sleep 600\n")
    fake.chmod(0o755)
    tag = f"PATCHSMITH_TEST_TAG={uuid.uuid4().hex}"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env[tag.split("=")[0]] = tag.split("=")[1]
    argv = [sys.executable, "-c", CLI, "fleet", "run", "unittest-to-assert", "--repos"]
    argv += [str(listing), "--runs-dir", str(tmp_path / "runs"), "--workers", "2", "--json"]
    driver = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        # both workers are inside their clone
        wait_for(lambda: sum("sleep" in c for c in tagged(tag).values()) >= 2, "two git clones")
        yield driver, tag
    finally:
        for pid in tagged(tag):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            driver.kill()
        driver.wait()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_driver_stops_every_worker_and_git(
    slow_run: tuple[subprocess.Popen[bytes], str], signum: int
) -> None:
    driver, tag = slow_run
    workers = [pid for pid, c in tagged(tag).items() if "patchsmith.fleet.worker" in c]
    assert len(workers) == 2

    driver.send_signal(signum)
    code = driver.wait(timeout=BOUND)

    assert code == 128 + signum
    assert driver.stderr is not None
    err = driver.stderr.read().decode()
    assert "stopped by" in err and "Traceback" not in err
    wait_for(lambda: not tagged(tag), "every worker and git to end")


def test_a_killed_driver_takes_its_workers_and_git_along(
    slow_run: tuple[subprocess.Popen[bytes], str],
) -> None:
    driver, tag = slow_run

    driver.kill()
    driver.wait(timeout=BOUND)

    wait_for(lambda: not tagged(tag), "every worker and git to end")
