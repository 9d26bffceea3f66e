"""Tests for the licence-header guard."""

from __future__ import annotations

from tests.guards.changes import context, create, delete, update

from patchsmith.errors import FailureCode
from patchsmith.guards.licence import LicenceHeaderGuard
from patchsmith.policy import LicencePolicy, Policy

HEADED = "# SPDX-License-Identifier: Apache-2.0\nimport os\n\nprint(os.sep)\n"
REQUIRED = Policy(licence=LicencePolicy(require_on_new_files=("src/**/*.py",)))


class TestLicenceHeaderGuard:
    def test_dropping_a_header_is_refused(self) -> None:
        """An update that loses the header is refused."""
        failures = LicenceHeaderGuard().check(
            [update("src/a.py", HEADED, "import os\n\nprint(os.sep)\n")], context()
        )

        assert [FailureCode.LICENCE_HEADER_MISSING] == [f.code for f in failures]
        assert "src/a.py had a header" in failures[0].message

    def test_keeping_or_never_having_a_header_passes(self) -> None:
        """Edits below a kept header, and files that never had one, pass."""
        changes = [
            update("src/a.py", HEADED, HEADED.replace("os.sep", "os.linesep")),
            update("src/b.py", "x = 1\n", "x = 2\n"),
            delete("src/c.py", HEADED),
        ]

        assert [] == LicenceHeaderGuard().check(changes, context())

    def test_new_file_needs_header_only_where_required(self) -> None:
        """A new file matching require_on_new_files needs the marker; others do not."""
        changes = [
            create("src/pkg/new.py", "x = 1\n"),
            create("src/pkg/ok.py", HEADED),
            create("docs/notes.md", "hello\n"),
        ]

        failures = LicenceHeaderGuard().check(changes, context(REQUIRED))

        assert ["src/pkg/new.py"] == [f.file for f in failures]

    def test_marker_and_depth_are_configurable(self) -> None:
        """A custom marker is looked for only within header_lines."""
        policy = Policy(licence=LicencePolicy(marker="Copyright ACME", header_lines=2))
        old = "#!/bin/sh\n# Copyright ACME\necho hi\n"
        new = "#!/bin/sh\n\n# Copyright ACME\necho hi\n"

        failures = LicenceHeaderGuard().check([update("run.sh", old, new)], context(policy))

        assert 1 == len(failures)
