"""`patchsmith run` end to end: scripted replies, a command per turn, JSON out, usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.pipeline.test_loop import SCALE_TASK, STALE
from tests.workspace_snapshot import snapshot_tree

import patchsmith
import patchsmith.cli
from patchsmith.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "agent"

# A model as a command: reads the prompt on stdin, answers from the feedback in it.
MODEL = textwrap.dedent(
    """
    import re, sys
    prompt = sys.stdin.read()
    if "Feedback:" not in prompt:
        sys.stdout.write(open(sys.argv[1]).read())
        raise SystemExit(0)
    feedback = prompt.split("Feedback:", 1)[1]
    first, last = map(int, re.search(r"lines (\\d+)-(\\d+) of calc.py", feedback).groups())
    shown = {int(a): b for a, b in re.findall(r"^\\s*(\\d+) \\| ?(.*)$", feedback, re.M)}
    body = []
    for n in range(first, last + 1):
        new = re.sub(r"\\.append\\((.*)\\)$", r".append(round(\\1, 2))", shown[n])
        body += [" " + shown[n]] if new == shown[n] else ["-" + shown[n], "+" + new]
    sys.stdout.write("--- a/calc.py\\n+++ b/calc.py\\n@@\\n" + "\\n".join(body) + "\\n")
    """
)


@pytest.fixture(name="files")
def _files(tmp_path: Path) -> dict[str, Path]:
    task = tmp_path / "task.json"
    task.write_text(json.dumps(SCALE_TASK))
    stale = tmp_path / "stale.diff"
    stale.write_text(STALE)
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    return {"task": task, "stale": stale, "model": model}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = patchsmith.cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


class TestRunCommand:
    def test_command_source_repairs_from_the_feedback(
        self, calc: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
    ) -> None:
        cmd = f"{sys.executable} {files['model']} {files['stale']}"

        code, out, _ = _run(
            ["run", str(files["task"]), "-C", str(calc), "--source-cmd", cmd, "--json"], capsys
        )
        data = json.loads(out)

        assert 0 == code
        assert "succeeded" == data["status"]
        assert ["refused", "applied"] == [t["outcome"] for t in data["turns"]]
        assert "round(value * factor, 2)" in (calc / "calc.py").read_text()
        with Store.open(calc / ".patchsmith") as store:
            assert store.get_run(data["run_id"]) is not None

    def test_turns_as_json_on_stdin(
        self, calc: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--turn-format json: the command gets the whole turn (here it echoes its prompt's
        task back as a reply, which is no edit: refused until the budget runs out)."""
        echo = files["model"].parent / "echo.py"
        echo.write_text(
            "import json, sys\nturn = json.load(sys.stdin)\n"
            "assert turn['milestone']['id'] == 'm1' and 'prompt' in turn\n"
            "print(turn['task']['objective'])\n"
        )
        argv = ["run", str(files["task"]), "-C", str(calc), "--turn-format", "json"]
        argv += ["--source-cmd", f"{sys.executable} {echo}", "--max-attempts", "2", "--json"]

        code, out, _ = _run(argv, capsys)
        data = json.loads(out)

        assert 1 == code
        assert "budget_exhausted" == data["status"]
        assert ["refused", "duplicate"] == [t["outcome"] for t in data["turns"]]

    def test_replies_file_in_text(
        self, calc: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
    ) -> None:
        replies = files["task"].parent / "replies.jsonl"
        fixed = STALE.replace("items", "values").replace("item", "value")
        fixed = fixed.replace("(k)", "(factor)").replace("k)", "factor)").replace(", k", ", factor")
        fixed = fixed.replace("out", "result")
        replies.write_text(json.dumps(STALE) + "\n" + json.dumps(fixed) + "\n")

        code, out, _ = _run(
            ["run", str(files["task"]), "-C", str(calc), "--replies", str(replies)], capsys
        )

        assert 0 == code
        assert "succeeded" in out and "m1: done after 2 attempt(s); UNIFIED_DIFF" in out

    def test_failure_in_text_exits_1_and_writes_nothing(
        self, calc: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
    ) -> None:
        before = snapshot_tree(calc)
        replies = files["task"].parent / "replies.json"
        replies.write_text(json.dumps([STALE]))

        code, out, err = _run(
            ["run", str(files["task"]), "-C", str(calc), "--replies", str(replies)], capsys
        )

        assert 1 == code
        assert "source_failed" in out and "SOURCE_FAILED" in err
        assert before == snapshot_tree(calc)

    def test_a_failing_command(
        self, calc: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
    ) -> None:
        cmd = f"{sys.executable} -c \"import sys; sys.exit('no model today')\""

        code, out, _ = _run(
            ["run", str(files["task"]), "-C", str(calc), "--source-cmd", cmd, "--json"], capsys
        )
        data = json.loads(out)

        assert (1, "source_failed") == (code, data["status"])
        assert "no model today" in data["errors"][0]["message"]

    @pytest.mark.parametrize(
        ("script", "needle"),
        [
            ("pass", "printed no reply"),
            ("import time; time.sleep(30)", "failed"),
        ],
    )
    def test_silent_or_slow_commands(self, calc: Path, script: str, needle: str) -> None:
        from patchsmith.pipeline.source import CommandSource, SourceError

        source = CommandSource([sys.executable, "-c", script], timeout_seconds=1)
        result = patchsmith.run_task(SCALE_TASK, source, root=calc)

        assert "source_failed" == result.status.value
        assert needle in result.errors[0].message
        with pytest.raises(SourceError):
            CommandSource(["/nonexistent/model"])(result_turn(calc))

    @pytest.mark.parametrize(
        ("argv", "needle"),
        [
            (["--replies", "/nonexistent/replies.json"], "cannot read replies"),
            (["--source-cmd", "'unclosed"], "cannot split"),
            (["--source-cmd", ""], "names no command"),
            (["--replies", "REPLIES", "--max-attempts", "0"], "invalid budget"),
        ],
    )
    def test_usage_errors(
        self,
        calc: Path,
        files: dict[str, Path],
        argv: list[str],
        needle: str,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        argv = [str(files["stale"]) if a == "REPLIES" else a for a in argv]
        code, out, _ = _run(["run", str(files["task"]), "-C", str(calc), *argv, "--json"], capsys)

        assert 2 == code
        assert needle in json.loads(out)["errors"][0]["message"]

    def test_bad_task_and_root(
        self, tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
    ) -> None:
        bad = tmp_path / "bad.json"
        bad.write_text('{"objective": "x", "colour": "blue"}')

        code, out, _ = _run(["run", str(bad), "--replies", str(files["stale"]), "--json"], capsys)
        assert (2, "INVALID_TASK") == (code, json.loads(out)["errors"][0]["code"])
        code, _, _ = _run(
            ["run", str(bad), "-C", str(tmp_path / "nope"), "--replies", str(files["stale"])],
            capsys,
        )
        assert 2 == code


def result_turn(calc: Path) -> object:
    from patchsmith.pipeline.source import ScriptedSource

    source = ScriptedSource([STALE])
    patchsmith.run_task(SCALE_TASK, source, root=calc, record=False)
    return source.turns[0]


class TestReplies:
    def test_scripted_replies_from_files(self, tmp_path: Path) -> None:
        from patchsmith.pipeline.source import SourceError, load_replies

        (tmp_path / "a.json").write_text('["text", {"operations": []}]')
        (tmp_path / "b.jsonl").write_text('"one"\n\n"two"\n')
        (tmp_path / "c.json").write_text('"only"')
        (tmp_path / "d.json").write_text("[1]")
        (tmp_path / "e.json").write_text("{not json")

        assert 2 == len(load_replies(tmp_path / "a.json")._replies)
        assert ["one", "two"] == load_replies(tmp_path / "b.jsonl")._replies
        assert ["only"] == load_replies(tmp_path / "c.json")._replies
        for name in ("d.json", "e.json"):
            with pytest.raises(SourceError):
                load_replies(tmp_path / name)

    def test_command_source_arguments(self) -> None:
        from patchsmith.pipeline.source import CommandSource

        with pytest.raises(ValueError):
            CommandSource([])
        with pytest.raises(ValueError):
            CommandSource(["x"], turn_format="xml")


class TestExampleAgent:
    def test_python_agent(self, tmp_path: Path) -> None:
        """examples/agent/agent.py: run_task with the scripted model, repaired on attempt 2."""
        done = subprocess.run(
            [sys.executable, str(EXAMPLE / "agent.py"), str(tmp_path / "scratch")],
            capture_output=True,
            text=True,
            check=False,
        )

        assert 0 == done.returncode, done.stderr
        assert "attempt 1: refused\nattempt 2: applied\n" in done.stdout
        assert "updated[name] = min(count + amount, 100)" in done.stdout

    def test_cli_agent(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The same model as a command: `patchsmith run --source-cmd "python model.py"`."""
        scratch = tmp_path / "scratch"
        subprocess.run(["cp", "-R", str(EXAMPLE / "workspace"), str(scratch)], check=True)
        argv = ["run", str(EXAMPLE / "task.json"), "-C", str(scratch), "--json"]
        argv += ["--source-cmd", f"{sys.executable} {EXAMPLE / 'model.py'}"]

        code, out, _ = _run(argv, capsys)

        assert (0, "succeeded") == (code, json.loads(out)["status"])
        assert "min(count + amount, 100)" in (scratch / "inventory.py").read_text()

    def test_cli_agent_as_the_docs_type_it(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Paths in --source-cmd are relative to where the user typed the command, not to -C."""
        scratch = tmp_path / "ws"
        subprocess.run(["cp", "-R", str(EXAMPLE / "workspace"), str(scratch)], check=True)
        monkeypatch.chdir(EXAMPLE.parent.parent)
        argv = ["run", "examples/agent/task.json", "-C", str(scratch), "--json"]
        argv += ["--source-cmd", f"{sys.executable} examples/agent/model.py"]

        code, out, _ = _run(argv, capsys)

        assert (0, "succeeded") == (code, json.loads(out)["status"])

    def test_source_command_is_told_the_workspace(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The command finds the workspace in $PATCHSMITH_ROOT."""
        scratch = tmp_path / "ws"
        subprocess.run(["cp", "-R", str(EXAMPLE / "workspace"), str(scratch)], check=True)
        seen = tmp_path / "seen.txt"
        script = tmp_path / "model.py"
        script.write_text(
            "import os, pathlib, sys\n"
            f"pathlib.Path({str(seen)!r}).write_text(os.environ['PATCHSMITH_ROOT'])\n"
            "sys.stdout.write('no edit here')\n"
        )
        argv = ["run", str(EXAMPLE / "task.json"), "-C", str(scratch), "--json"]
        argv += ["--source-cmd", f"{sys.executable} {script}", "--max-attempts", "1"]

        _run(argv, capsys)

        assert str(scratch) == seen.read_text()


def test_propose_stays_callable_after_its_module_is_imported() -> None:
    """`patchsmith.propose` stays the function once its module is imported."""
    import importlib

    importlib.import_module("patchsmith.attempt.propose")

    assert callable(patchsmith.propose)
