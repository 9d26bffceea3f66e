"""A change refused with SECRET_ADDED keeps no credential in clear in the audit store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import patchsmith
import patchsmith.cli
from patchsmith.errors import FailureCode
from patchsmith.runtime.excerpts import masked_json, masked_text
from patchsmith.store import DB_FILE_NAME

AWS = "AKIA" + "Q3EGRT5X2ZK7WPLM"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
KEY_BODY = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn" + "/ygWyF8PbnGy0AHB7MkPy"
PEM = "-----BEGIN RSA " + "PRIVATE KEY-----"
PEM_END = "-----END RSA " + "PRIVATE KEY-----"
SECRETS = (AWS, GITHUB, KEY_BODY)

APP = "def connect():\n    return None\n"
DIFF = (
    "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,5 @@\n def connect():\n"
    f'+    key = "{AWS}"\n'
    f"+    token = '{GITHUB}'\n"
    "+    return (key, token)\n"
    "-    return None\n"
    "--- /dev/null\n+++ b/deploy.pem\n@@ -0,0 +1,3 @@\n"
    f"+{PEM}\n+{KEY_BODY}\n+{PEM_END}\n"
)


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP)
    return tmp_path


def stored_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (root / ".patchsmith").glob(f"{DB_FILE_NAME}*"))


def test_apply_refused_for_a_secret_keeps_it_masked(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = patchsmith.apply(DIFF, root)

    assert FailureCode.SECRET_ADDED in {e.code for e in report.errors}
    assert report.attempt_id is not None
    assert (root / "app.py").read_text() == APP  # nothing written
    raw = stored_bytes(root)
    assert raw and not any(s.encode() in raw for s in SECRETS)

    for argv in (["show", report.attempt_id], ["show", report.attempt_id, "--json"]):
        patchsmith.cli.main([*argv, "-C", str(root)])
        out = capsys.readouterr().out
        assert "[masked]" in out
        assert not any(s in out for s in SECRETS), out
        if "--json" in argv:
            json.loads(out)


def test_a_proposal_refused_for_a_secret_keeps_valid_masked_json(root: Path) -> None:
    proposal = {
        "proposal_id": "p-1",
        "run_id": "r-1",
        "attempt_no": 1,
        "strategy": "UNIFIED_DIFF",
        "objective": "connect with a key",
        "operations": [{"type": "patch", "format": "udiff", "text": DIFF}],
    }

    report = patchsmith.propose(json.dumps(proposal), root)

    assert FailureCode.SECRET_ADDED in {e.code for e in report.errors}
    raw = stored_bytes(root)
    assert not any(s.encode() in raw for s in SECRETS)
    assert patchsmith.judge("r-1", root, record=False).criteria  # the proposal still reads back


def test_an_applied_change_is_kept_exactly(root: Path) -> None:
    diff = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def connect():\n"
    diff += "-    return None\n+    return 1\n"

    report = patchsmith.apply(diff, root)

    assert report.attempt_id is not None and not report.errors
    assert b"+    return 1" in stored_bytes(root)


class TestMaskedText:
    def test_values_lines_and_key_bodies(self) -> None:
        text = f'x = "{AWS}"\nescaped: {json.dumps(GITHUB)}\n{PEM}\n{KEY_BODY}\n{PEM_END}\nok\n'

        masked = masked_text(text, values=[GITHUB])

        assert not any(s in masked for s in SECRETS)
        assert masked.endswith(f"{PEM_END}\nok\n")

    def test_json_stays_json(self) -> None:
        text = json.dumps({"a": [f'key = "{AWS}"', 1, None], "b": {"c": GITHUB}})

        masked = masked_json(text, values=[GITHUB])

        assert not any(s in masked for s in SECRETS)
        assert json.loads(masked)["a"][1:] == [1, None]

    def test_text_that_is_not_json_has_its_values_replaced(self) -> None:
        masked = masked_json(f"{{not json {GITHUB}", values=[GITHUB])
        assert masked == "{not json [masked]"
