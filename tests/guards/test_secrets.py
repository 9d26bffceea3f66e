"""Tests for the secret guard."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.guards.changes import context, create, update

from patchsmith.errors import FailureCode
from patchsmith.guards.secrets import SecretGuard
from patchsmith.runtime.secrets import find_secrets

# assembled at run time so that no scanner flags this file itself
AWS = "AKIA" + "Q3EGRT5X2ZK7WPLM"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
SLACK = "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
PEM = "-----BEGIN RSA " + "PRIVATE KEY-----"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"


class TestSecretGuard:
    @pytest.mark.parametrize(
        ("line", "kind"),
        [
            (f'key = "{AWS}"', "AWS Access Key"),
            (f"token: {GITHUB}", "GitHub Token"),
            (f"SLACK={SLACK}", "Slack Token"),
            (f"const k = '{GOOGLE}';", "Google API Key"),
            (PEM, "Private Key"),
            (f'stripe.api_key = "{STRIPE}"', "Stripe Access Key"),
        ],
    )
    def test_added_credential_is_refused(self, line: str, kind: str) -> None:
        """Each credential shape in an added line is SECRET_ADDED naming the line and kind."""
        old = "a = 1\nb = 2\n"
        new = "a = 1\n" + line + "\nb = 2\n"

        failures = SecretGuard().check([update("conf.py", old, new)], context())

        assert FailureCode.SECRET_ADDED in [f.code for f in failures]
        assert any(f"{kind} in conf.py line 2" in f.message for f in failures)
        assert all(AWS not in f.message and GITHUB not in f.message for f in failures)

    def test_existing_secret_line_is_not_reported(self) -> None:
        """Only added lines count: a secret already in the file is not this change's doing."""
        old = f'key = "{AWS}"\nx = 1\n'
        new = f'key = "{AWS}"\nx = 2\n'

        assert [] == SecretGuard().check([update("conf.py", old, new)], context())

    def test_new_file_lines_are_all_added(self) -> None:
        """Every line of a new file is scanned."""
        findings = find_secrets(create("k.pem", f"{PEM}\nMIIE...\n"))

        assert [(1, "Private Key")] == [(f.line, f.kind) for f in findings]

    def test_allowlist_pragma_skips_line(self) -> None:
        """A line marked `pragma: allowlist secret` is not reported."""
        line = f'key = "{AWS}"  # pragma: allowlist secret\n'

        assert [] == SecretGuard().check([create("c.py", line)], context())

    @pytest.mark.parametrize(
        "line",
        [
            'API_KEY_UNAVAILABLE = "COMMON::API_KEY_INVALID"',
            'password = os.environ["DB_PASSWORD"]',
            "sha = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'",
            "AKIA_PREFIX = 'AKIA'  # too short to be a key",
            "ghp_short",
            'url = "https://user:pass@example.org/path"',
            "-----BEGIN PUBLIC KEY-----",
        ],
    )
    def test_ordinary_code_passes(self, line: str) -> None:
        """Near misses: keywords, hashes, short prefixes, example URLs, public keys."""
        assert [] == SecretGuard().check([create("a.py", line + "\n")], context())

    def test_basic_auth_to_real_host_is_refused(self) -> None:
        """Credentials in a URL to a real host are reported; only example hosts are exempt."""
        line = 'DB = "postgres://admin:s3cr3tPassw0rd@db.internal.company.com:5432/prod"\n'

        findings = find_secrets(create("settings.py", line))

        assert ["Basic Auth Credentials"] == [f.kind for f in findings]

    def test_unusual_line_breaks_do_not_confuse_the_scan(self) -> None:
        """Form feeds and CRs inside added lines keep line numbers right."""
        text = "a\x0cb\r\nc\u2028d\n" + f'k = "{AWS}"\n'

        findings = find_secrets(create("x.txt", text))

        assert [3] == sorted({f.line for f in findings})

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.from_regex(r"[a-z_]{1,12} = [0-9]{1,6}", fullmatch=True), max_size=8))
    def test_plain_assignments_never_flagged(self, lines: list[str]) -> None:
        """Simple numeric assignments are never secrets."""
        text = "".join(line + "\n" for line in lines)

        assert [] == find_secrets(create("gen.py", text))


class TestPrefilter:
    """The one-regex prefilter says "may hold a secret" exactly when a plugin pattern would."""

    SHAPES = (AWS, GITHUB, SLACK, GOOGLE, PEM, STRIPE, "npm_", "SG.", "://user:pw@host", "eyJ")

    @staticmethod
    def plugin_match(line: str) -> bool:
        import re

        from patchsmith.runtime.secrets import _denylist_sources

        return any(re.compile(p, f).search(line) for p, f in _denylist_sources())

    @settings(max_examples=200, deadline=None)
    @given(
        st.sampled_from(SHAPES),
        st.text(alphabet="aZ09_-.:/@=\"' +", max_size=40),
        st.text(alphabet="aZ09_-.:/@=\"' +", max_size=40),
    )
    def test_same_answer_as_each_plugin_pattern(self, shape: str, before: str, after: str) -> None:
        """Around every credential shape and its fragments: one pass agrees with all patterns."""
        from patchsmith.runtime.secrets import _plugin_patterns

        for line in (before + shape + after, before + shape[: len(shape) // 2] + after):
            combined = any(p.search(line) for p in _plugin_patterns())
            assert self.plugin_match(line) == combined, line

    def test_one_pass_per_line(self) -> None:
        """The plugins' flag groups are scoped inside one pattern, not one pattern each."""
        from patchsmith.runtime.secrets import _plugin_patterns

        assert 1 == len(_plugin_patterns())

    def test_flags_that_cannot_be_scoped_keep_their_own_pattern(self) -> None:
        """A group under a flag no `(?x:...)` scope carries (ASCII) is left to its own regex."""
        import re

        from patchsmith.runtime.secrets import _one_pattern

        assert _one_pattern({re.ASCII: ["a"]}) is None
        joined = _one_pattern({re.UNICODE: ["a"], re.UNICODE | re.IGNORECASE: ["b"]})
        assert joined is not None
        assert [True, True, False] == [bool(joined.search(t)) for t in ("a", "B", "A")]
