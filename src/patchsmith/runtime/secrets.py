"""Finding and masking credentials in text: the scanner the secret guard runs.

Below the policy and the guards, so that excerpts, kept replies and the policy's own
messages mask secrets without importing a guard (`patchsmith.guards.secrets` holds the
guard itself).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, NamedTuple

from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import diff_stat
from patchsmith.runtime.usercache import load_entry, store_entry

__all__ = [
    "DETECT_SECRETS_PLUGINS",
    "MASK",
    "SecretFinding",
    "find_secrets",
    "mask_secret_lines",
    "secret_values",
]

MASK = "[masked]"
"""What stands in an excerpt for a value the secret guard would flag."""

DETECT_SECRETS_PLUGINS = (
    "AWSKeyDetector",
    "ArtifactoryDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "CloudantDetector",
    "DiscordBotTokenDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "JwtTokenDetector",
    "MailchimpDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SoftlayerDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
)
"""detect-secrets plugins that recognise a credential by its shape.

Left out: KeywordDetector and the two high-entropy string plugins, which flag
ordinary code (`API_KEY_INVALID: "..."`, ids, hashes: 9 of the 11 hits they and
the rest made on the public corpus' added lines were such), and IPPublicDetector,
since an address is not a credential. See bench/secrets_false_positives.py.
"""

_OWN_SOURCES: tuple[tuple[str, str], ...] = (
    ("Private Key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ("AWS Access Key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("GitHub Token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})\b"),
    ("Slack Token", r"\bxox[abposr]-[0-9A-Za-z]+-[0-9A-Za-z-]{8,}"),
    ("Google API Key", r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
)

# every added line is searched with this one; the patterns one by one only on a hit
_ANY_OWN_PATTERN = re.compile("|".join(f"(?:{p})" for _, p in _OWN_SOURCES))


@cache
def _own_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(pattern)) for kind, pattern in _OWN_SOURCES)


_ALLOWLIST_MARK = re.compile(r"pragma:\s*allowlist[ -]secret", re.IGNORECASE)
# Patterns needed only for a flagged line are left to `re`'s cache: compiled on first use.
_URL_CREDENTIALS = r"://[^\s:/@'\"]+:[^\s@'\"]*@([^\s/:'\"?#]+)"
_RESERVED_HOSTS = (
    r"(?i)^(?:127\.0\.0\.1|localhost"
    r"|(?:[^.]+\.)*(?:example\.(?:com|org|net)|example|test|invalid|localhost))$"
)
# characters str.splitlines() breaks on (unidiff splits the diff with it); "\n" is already gone
_LINE_BREAKS = str.maketrans(dict.fromkeys("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " "))
_IS_INVALID_FILE = "detect_secrets.filters.common.is_invalid_file"
# with this filter on, plugins verify candidates against live services: never here
_VERIFY = "detect_secrets.filters.common.is_ignored_due_to_verification_policies"


class SecretFinding(NamedTuple):
    """A credential-shaped string in an added line (the value itself is never kept)."""

    file: str
    line: int
    kind: str


def find_secrets(change: FileChange) -> list[SecretFinding]:
    """Credentials in the lines `change` adds, one finding per (line, kind), in line order."""
    added = diff_stat(change).added
    if not added:
        return []
    return _findings(change.path, added)


def _findings(path: str, lines: tuple[tuple[int, str], ...]) -> list[SecretFinding]:
    findings: set[SecretFinding] = set()
    text_by_line = dict(lines)
    for number, kind in _scan_with_detect_secrets(path, lines):
        if kind == "Basic Auth Credentials" and _only_reserved_hosts(text_by_line[number]):
            continue
        findings.add(SecretFinding(path, number, kind))
    for number, text in lines:
        if not _ANY_OWN_PATTERN.search(text) or _ALLOWLIST_MARK.search(text):
            continue
        for kind, pattern in _own_patterns():
            if pattern.search(text):
                findings.add(SecretFinding(path, number, kind))
    return sorted(findings, key=lambda f: (f.line, f.kind))


# A value worth hiding on a flagged line: a quoted string, a URL's user:password, or a
# long run of token characters.
_VALUE = r"\"[^\"]{4,}\"|'[^']{4,}'|(?<=://)[^\s/@'\"]+@|[A-Za-z0-9+/=_\-.]{16,}"


def mask_secret_lines(path: str, lines: Sequence[tuple[int, str]]) -> dict[int, str]:
    """For each line the secret guard would flag, the line with its secret values masked.

    `lines` are (line number, text) pairs of a file; only flagged lines are returned.
    Private key blocks lose the whole line after the marker; other lines keep their
    code and lose quoted values and long token-shaped runs, so an excerpt still shows
    the shape of the line without the credential.
    """
    masked: dict[int, str] = {}
    for finding in _findings(path, tuple(lines)):
        text = masked.get(finding.line, dict(lines)[finding.line])
        hidden = re.sub(_VALUE, MASK, text)
        for _, pattern in _own_patterns():
            hidden = pattern.sub(MASK, hidden)
        masked[finding.line] = hidden if hidden != text else MASK
    return masked


def secret_values(changes: Sequence[FileChange]) -> set[str]:
    """The credential-shaped values on the added lines of `changes` this guard flags.

    Quoted values, URL passwords and token-shaped runs of each flagged line, and the
    body of a private key block, so a copy of the change elsewhere (the model's reply,
    a proposal, a diff) can be masked wherever the value appears. Values under 8
    characters are left out: masking them would hide ordinary words.
    """
    values: set[str] = set()
    for change in changes:
        flagged = {finding.line for finding in find_secrets(change)}
        if not flagged:
            continue
        in_key = False
        for number, text in diff_stat(change).added:
            if in_key:
                values.add(text.strip())
                in_key = not _key_end().search(text)
            if number not in flagged:
                continue
            values.update(m.group(0).strip("'\"@") for m in re.finditer(_VALUE, text))
            for _, pattern in _own_patterns():
                values.update(m.group(0) for m in pattern.finditer(text))
            in_key = bool(_own_patterns()[0][1].search(text)) and not _key_end().search(text)
    return {value for value in values if len(value) >= 8}


@cache
def _key_end() -> re.Pattern[str]:
    return re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")


def _only_reserved_hosts(text: str) -> bool:
    # user:password@example.org in a test or a doc is an illustration, not a credential
    hosts = re.findall(_URL_CREDENTIALS, text)
    return bool(hosts) and all(re.match(_RESERVED_HOSTS, host) for host in hosts)


def _scan_with_detect_secrets(
    path: str, added: tuple[tuple[int, str], ...]
) -> list[tuple[int, str]]:
    candidates = [(n, t) for n, t in added if _may_hold_secret(t)]
    if not candidates:
        return []
    from detect_secrets.core.secrets_collection import SecretsCollection
    from unidiff.errors import UnidiffParseError

    _configure_detect_secrets()
    name = path.replace("\t", " ")
    hunks = "".join(
        f"@@ -0,0 +{number},1 @@\n+{text.translate(_LINE_BREAKS)}\n" for number, text in candidates
    )
    diff = f"diff --git a/{name} b/{name}\n--- a/{name}\n+++ b/{name}\n{hunks}"
    collection = SecretsCollection()
    try:
        collection.scan_diff(diff)
    except UnidiffParseError:  # pragma: no cover - the diff above is well formed by construction
        return []
    return [(secret.line_number, str(secret.type)) for _, secret in collection]


def _may_hold_secret(text: str) -> bool:
    """Whether a plugin's denylist pattern matches `text`: the prefilter's answer, exactly.

    Every plugin in DETECT_SECRETS_PLUGINS reports only what its `denylist` finds, so a
    line none of those patterns matches cannot yield a finding; skipping it up front
    spares detect-secrets' per-line, per-plugin dispatch, which dominates its cost. A
    pattern is tried only when the line holds one of its needles (`_needles`: strings
    every match contains), so a process compiles only the patterns its lines could
    match, not all of them (compiling them all cost a cold `apply` ~4 ms).
    """
    if not text.isascii():
        return any(_denylist_pattern(i).search(text) for i in range(len(_prefilter())))
    folded = text.lower()
    wanted = set(_needleless())
    for needle, indices in _needle_index():
        if needle in folded:
            wanted.update(indices)
    return any(_denylist_pattern(i).search(text) for i in sorted(wanted))


@cache
def _needle_index() -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Each needle with the patterns it admits: a line is looked at once per needle (about
    50), not once per pattern and needle (a 1.4M-line rewrite spent 30 µs a line there)."""
    by_needle: dict[str, list[int]] = {}
    for index, (needles, _, _) in enumerate(_prefilter()):
        for needle in needles:
            by_needle.setdefault(needle, []).append(index)
    return tuple((needle, tuple(indices)) for needle, indices in by_needle.items())


@cache
def _needleless() -> tuple[int, ...]:
    """The patterns without needles: tried on every line."""
    return tuple(i for i, (needles, _, _) in enumerate(_prefilter()) if not needles)


@cache
def _denylist_pattern(index: int) -> re.Pattern[str]:
    _, pattern, flags = _prefilter()[index]
    return re.compile(pattern, flags)


@cache
def _prefilter() -> tuple[tuple[tuple[str, ...], str, int], ...]:
    """(needles, pattern, flags) of every denylist pattern, the needles from the cache.

    Finding needles parses every pattern, which costs nearly what compiling them does;
    so they are kept in the per-user cache beside the patterns, under the same key.
    """
    sources = _denylist_sources()
    key = _plugins_key()
    entry = None if key is None else key.replace("secret-denylists-", "secret-needles-", 1)
    if entry is not None:
        stored = load_entry(entry)
        if (
            isinstance(stored, list)
            and len(stored) == len(sources)
            and all(
                isinstance(item, list) and all(isinstance(n, str) and n for n in item)
                for item in stored
            )
        ):
            return tuple(
                (tuple(needles), pattern, flags)
                for needles, (pattern, flags) in zip(stored, sources, strict=True)
            )
    found = [_needles(pattern, flags) for pattern, flags in sources]
    if entry is not None:
        store_entry(entry, [list(needles) for needles in found])
    return tuple(
        (needles, pattern, flags) for needles, (pattern, flags) in zip(found, sources, strict=True)
    )


def _needles(pattern: str, flags: int) -> tuple[str, ...]:
    """Lower-case ASCII strings one of which every match of `pattern` holds; `()` if unknown.

    Read from the parsed pattern: a run of literal characters in its top-level sequence,
    or in a group or a repeat of at least one, or one such run from each alternative of a
    branch. Compared with the lower-cased line, and only for an ASCII line: an ASCII
    literal matches (with or without IGNORECASE) only ASCII characters equal to it
    ignoring case; a non-ASCII literal (Kelvin sign, long s) could match an ASCII letter
    under IGNORECASE, so it is never a needle.
    """
    import importlib

    parser: Any = importlib.import_module("re._parser")  # private, but only read here
    constants: Any = importlib.import_module("re._constants")
    try:
        parsed = parser.parse(pattern, flags)
    except re.error:  # pragma: no cover - the plugins' patterns compile
        return ()
    required = _required(parsed, constants)
    return tuple(sorted(required)) if required else ()


def _required(sequence: Any, ops: Any) -> frozenset[str] | None:
    best: frozenset[str] | None = None
    run: list[str] = []

    def consider(candidate: frozenset[str] | None) -> None:
        nonlocal best
        if candidate and (best is None or _selectivity(candidate) > _selectivity(best)):
            best = candidate

    for op, value in [*sequence, (None, None)]:
        if op is ops.LITERAL and value < 128:
            run.append(chr(value).lower())
            continue
        if run:
            consider(frozenset({"".join(run)}))
            run = []
        if op is ops.SUBPATTERN:
            consider(_required(value[3], ops))
        elif op is getattr(ops, "ATOMIC_GROUP", object()):
            consider(_required(value, ops))
        elif op in _repeats(ops) and value[0] >= 1:
            consider(_required(value[2], ops))
        elif op is ops.BRANCH:
            alternatives = [_required(branch, ops) for branch in value[1]]
            if all(alternatives):
                consider(frozenset().union(*(a for a in alternatives if a)))
    return best


def _repeats(ops: Any) -> tuple[Any, ...]:
    names = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
    return tuple(getattr(ops, name) for name in names if hasattr(ops, name))


def _selectivity(needles: frozenset[str]) -> tuple[int, int]:
    # the shortest needle decides how often a line holds one; fewer needles, fewer checks
    return min(len(n) for n in needles), -len(needles)


@cache
def _plugin_patterns() -> tuple[re.Pattern[str], ...]:
    # All the denylist patterns in one alternation (no longer on the scan's path: see
    # `_may_hold_secret`), kept as the reference the needles are tested against.
    by_flags: dict[int, list[str]] = {}
    for pattern, flags in _denylist_sources():
        by_flags.setdefault(flags, []).append(pattern)
    single = _one_pattern(by_flags)
    if single is not None:
        return (single,)
    return tuple(joined for flags, group in by_flags.items() for joined in _joined(group, flags))


# the flags a group may scope to itself, `(?ix:...)`; the others apply to a whole pattern
_SCOPED_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"))
_WHOLE_FLAGS = re.UNICODE


def _one_pattern(by_flags: dict[int, list[str]]) -> re.Pattern[str] | None:
    """Every group in one alternation, each under its own scoped flags (one regex pass per
    line); `None` when a group's flags cannot be scoped or a pattern does not compile so."""
    parts: list[str] = []
    for flags, group in by_flags.items():
        rest = flags & ~_WHOLE_FLAGS
        letters = "".join(letter for flag, letter in _SCOPED_FLAGS if rest & flag)
        if rest & ~sum(flag for flag, _ in _SCOPED_FLAGS):
            return None
        body = "|".join(f"(?:{p})" for p in group)
        parts.append(f"(?{letters}:{body})" if letters else f"(?:{body})")
    try:
        return re.compile("|".join(parts), _WHOLE_FLAGS)
    except re.error:  # pragma: no cover - e.g. a pattern with inline global flags
        return None


def _denylist_sources() -> list[tuple[str, int]]:
    """Every (pattern, flags) of the plugins' denylists, in plugin order.

    Loading detect-secrets (and the HTTP stack its plugins import to verify secrets
    online) to read these costs a cold process more than everything else an apply
    does, and most changes add no line any of them matches. So they are kept in the
    per-user cache, under a key naming the installed plugin files: an upgrade of
    detect-secrets (or an edit of a plugin) reads them afresh.
    """
    key = _plugins_key()
    if key is not None:
        stored = load_entry(key)
        if isinstance(stored, list) and all(
            isinstance(item, list)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], int)
            for item in stored
        ):
            return [(pattern, flags) for pattern, flags in stored]
    sources = _denylists_from_plugins()
    if key is not None:
        store_entry(key, [list(item) for item in sources])
    return sources


def _denylists_from_plugins() -> list[tuple[str, int]]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    plugins: list[type] = list(get_mapping_from_secret_type_to_class().values())
    by_name = {plugin.__name__: plugin for plugin in plugins}
    sources: list[tuple[str, int]] = []
    for name in DETECT_SECRETS_PLUGINS:
        denylist: Iterable[re.Pattern[str]] | None = getattr(by_name[name], "denylist", None)
        # a plugin that is not regex-based could match anywhere: scan every line then
        for pattern in denylist if denylist is not None else [re.compile("")]:
            sources.append((pattern.pattern, pattern.flags))
    return sources


def _plugins_key() -> str | None:
    """A cache entry name for the installed detect-secrets plugins (found, not imported)."""
    try:
        spec = importlib.util.find_spec("detect_secrets")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    plugins = os.path.join(next(iter(spec.submodule_search_locations)), "plugins")
    try:
        files = sorted(
            (entry.name, entry.stat().st_size, entry.stat().st_mtime_ns)
            for entry in os.scandir(plugins)
            if entry.name.endswith(".py")
        )
    except OSError:
        return None
    identity = json.dumps([1, plugins, files, DETECT_SECRETS_PLUGINS])
    return f"secret-denylists-{hashlib.sha256(identity.encode()).hexdigest()[:24]}.json"


def _joined(group: list[str], flags: int) -> list[re.Pattern[str]]:
    # one alternation per flag set: one regex pass per line instead of ~45
    try:
        return [re.compile("|".join(f"(?:{p})" for p in group), flags)]
    except re.error:  # pragma: no cover - e.g. a pattern with inline global flags
        return [re.compile(p, flags) for p in group]


def _configure_detect_secrets() -> None:
    # detect-secrets reads its plugins and filters from a process-wide singleton;
    # set ours once and again only if someone else changed it
    from detect_secrets.settings import get_settings

    settings = get_settings()
    if (
        set(settings.plugins) == set(DETECT_SECRETS_PLUGINS)
        and _IS_INVALID_FILE not in settings.filters
        and _VERIFY not in settings.filters
    ):
        return
    settings.clear()
    settings.configure_plugins([{"name": name} for name in DETECT_SECRETS_PLUGINS])
    # that filter drops every file not on disk; ours are staged in memory
    settings.disable_filters(_IS_INVALID_FILE)
