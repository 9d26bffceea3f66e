"""`patchsmith apply`: apply model output to a directory, all or nothing."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from patchsmith.cli._output import (
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_USAGE,
    missing_root,
    usage_error,
    write_json,
)
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import EditFormat
from patchsmith.model.report import ApplyReport, ApplyStatus

if TYPE_CHECKING:
    from patchsmith.policy import Policy

__all__ = ["add_record_option", "edit_format", "print_report", "register", "run"]

# Flush left, as printed (`textwrap` would cost every start its import).
FORMATS_HELP = """\
formats (detected by content; --format forces one). Prose and markdown
fences around any of them are ignored.

  udiff           unified diff, git-style or plain; numbers optional
                    --- a/app.py
                    +++ b/app.py
                    @@ -1,2 +1,2 @@
                     def greet():
                    -    return "hi"
                    +    return "hello"

  apply_patch     the apply_patch envelope
                    *** Begin Patch
                    *** Update File: app.py
                    @@ def greet():
                    -    return "hi"
                    +    return "hello"
                    *** End Patch

  search_replace  SEARCH/REPLACE blocks after the file's path
                    app.py
                    <<<<<<< SEARCH
                        return "hi"
                    =======
                        return "hello"
                    >>>>>>> REPLACE

  lazy_snippet    the path, then the new text in a fence, unchanged code
                  left out behind placeholder comments (merged by the
                  lines around them; ambiguous or absent anchors refuse)
                    app.py
                    ```python
                    # ... existing code ...
                    def greet():
                        return "hello"
                    # ... existing code ...
                    ```

  whole_file      the path, then the complete new file in a fence (under
                  auto-detection a block much shorter than the file
                  replaces only the stretch it matches)
                    app.py
                    ```python
                    def greet():
                        return "hello"
                    ```

  str_replace     editor tool calls as JSON (one object or a list)
                    {"command": "str_replace", "path": "app.py",
                     "old_str": "return \\"hi\\"", "new_str": "return \\"hello\\""}

omissions: a placeholder line is never written; a whole file that stops
early or drops most of a large file is refused unless --full-rewrite.

exit status: 0 everything applied (or would, with --check); 1 refused,
nothing changed (or, with --partial, only some edits applied); 2 usage error.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "apply",
        help="apply model output (a diff, envelope, blocks, ...) to files",
        description="Apply the edits in PATCH (or standard input) to the files under DIR. "
        "Every edit is located by content; nothing is written unless every edit "
        "located, and a refusal says, per hunk, why and what the file really holds.",
        epilog=FORMATS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "patch", nargs="?", default="-", metavar="PATCH", help="file, or - for stdin"
    )
    parser.add_argument("-C", dest="root", metavar="DIR", default=".", help="workspace root")
    parser.add_argument(
        "--check", action="store_true", help="dry run: print the diff, write nothing"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument(
        "--partial", action="store_true", help="apply what located even if some edits did not"
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="refuse any edit that locates only by tolerating more than whitespace "
        "(typographic punctuation, indentation shifts, differing context lines)",
    )
    parser.add_argument(
        "--format",
        default=EditFormat.AUTO,
        type=edit_format,
        metavar="{" + ",".join(f.value for f in EditFormat) + "}",
        help="the edit format (default: auto-detect; aliases such as diff or aider accepted)",
    )
    parser.add_argument(
        "--full-rewrite",
        action="store_true",
        help="whole files are meant as full rewrites: do not refuse one that drops most "
        "of a file or its ending",
    )
    add_record_option(parser)
    add_metadata_options(parser)
    parser.set_defaults(func=run)


def add_metadata_options(parser: argparse.ArgumentParser) -> None:
    """Add `--break-hardlinks`, `--write-read-only` and `--allow-policy-edit` (guards off)."""
    parser.add_argument(
        "--break-hardlinks",
        action="store_true",
        help="edit a file with other hard links anyway: only the name edited gets the new "
        "content, the other names keep the old (default: refuse, HARDLINKED_FILE)",
    )
    parser.add_argument(
        "--write-read-only",
        action="store_true",
        help="edit or delete files without write permission (their mode is kept; "
        "default: refuse, READ_ONLY_FILE)",
    )
    parser.add_argument(
        "--allow-policy-edit",
        action="store_true",
        help="let this change edit patchsmith.toml or the [tool.patchsmith] table of "
        "pyproject.toml (default: refuse, PROTECTED_PATH)",
    )


def policy_for(args: argparse.Namespace) -> Policy | None:
    """The workspace's policy with the guards these options switch off, if any.

    `None` (the workspace's own policy, loaded by the command) when no option is given
    or the policy cannot be read: the command then reports INVALID_POLICY itself, or
    judges a change to the unreadable policy file alone (docs/decisions/0025).
    """
    off = {
        name: False
        for name, given in (
            ("hard_links", args.break_hardlinks),
            ("read_only", args.write_read_only),
            ("policy_files", args.allow_policy_edit),
        )
        if given
    }
    if not off:
        return None
    from patchsmith.policy import load_policy

    rules = load_policy(args.root)
    if isinstance(rules, PatchFailure):
        return None
    return replace(rules, guards=replace(rules.guards, **off))


def add_record_option(parser: argparse.ArgumentParser) -> None:
    """Add `--no-record`, shared by every command that changes a workspace."""
    parser.add_argument(
        "--no-record",
        dest="record",
        action="store_const",
        const=False,
        default=None,
        help="keep no audit record in DIR/.patchsmith (default: the policy's `record`)",
    )


def edit_format(name: str) -> EditFormat:
    """argparse type: a format name or alias, else a usage error (exit 2)."""
    from patchsmith.formats.registry import format_named

    found = format_named(name)
    if found is None:
        names = ", ".join(f.value for f in EditFormat)
        raise argparse.ArgumentTypeError(f"unknown format {name!r} (choose from {names})")
    return found


def _read_patch(name: str, *, as_json: bool) -> str | None:
    """The patch text (stdin for "-"), bytes kept as they are; None after saying why not."""
    try:
        if name == "-":
            buffer = getattr(sys.stdin, "buffer", None)
            if buffer is None:  # a text stream standing in for stdin (tests, embedding)
                return str(sys.stdin.read())
            raw: bytes = buffer.read()
        else:
            with open(name, "rb") as handle:
                raw = handle.read()
    except OSError as exc:
        failure = PatchFailure(
            FailureCode.FILE_NOT_FOUND,
            f"cannot read {name}: {exc.strerror or exc}",
            hint="pass a readable patch file, or - to read standard input",
        )
        usage_error("apply", failure, as_json=as_json)
        return None
    # Undecodable bytes survive as surrogate escapes, so a Latin-1 patch still matches.
    return raw.decode("utf-8", "surrogateescape")


def run(args: argparse.Namespace) -> int:
    from patchsmith.attempt.api import apply

    bad_root = missing_root("apply", args.root, as_json=args.json)
    if bad_root is not None:
        return bad_root
    text = _read_patch(args.patch, as_json=args.json)
    if text is None:
        return EXIT_USAGE
    report = apply(
        text,
        args.root,
        format=args.format,
        check=args.check,
        partial=args.partial,
        record=args.record,
        full_rewrite=args.full_rewrite,
        policy=policy_for(args),
        # also when the policy cannot be read (policy_for gives None): a change that
        # fixes the policy file itself then still needs this opt-in
        allow_policy_edit=args.allow_policy_edit,
        strict=args.strict,
    )
    return print_report("apply", report, as_json=args.json)


def print_report(command: str, report: ApplyReport, *, as_json: bool) -> int:
    """Print `report` (one JSON object, or text for people) and return the exit code."""
    if as_json:
        write_json(report.to_json())
    else:
        _print_human(command, report)
    return EXIT_OK if report.ok else EXIT_REFUSED


def _print_human(command: str, report: ApplyReport) -> None:
    verb = "would apply" if report.check else "applied"
    for f in report.files:
        target = f" -> {f.new_path}" if f.new_path else ""
        mode = f" mode {f.mode}" if f.mode else ""
        sys.stdout.write(
            f"{f.action.value:7} {f.path}{target} ({f.hunks_applied}/{f.hunks_total} edits){mode}\n"
        )
    for condition in (*report.preconditions, *report.postconditions):
        sys.stdout.write(
            f"{condition.status.value:11} {condition.type.value}: {condition.evidence}\n"
        )
    for note in report.notes:
        sys.stdout.write(f"note: {note}\n")
    if report.errors or report.warnings:
        # The same bounded message a model gets: what was written, what failed, what to resend.
        sys.stderr.write(f"patchsmith {command}: {report.feedback()}\n")
    if report.check and report.diff:
        sys.stdout.write(report.diff)
    if report.status is ApplyStatus.ALREADY_APPLIED:
        sys.stdout.write("already applied: nothing to do\n")
    elif report.ok:
        sys.stdout.write(f"{verb}: {len(report.files)} file(s)\n")
    if report.attempt_id is not None:
        sys.stderr.write(f"patchsmith {command}: recorded as {report.attempt_id}\n")
