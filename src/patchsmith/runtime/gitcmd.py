"""The argv of every git call patchsmith makes: the repository's own programs stay off.

A repository's `.git/hooks/` (or the `core.hooksPath` its config names) and its
`core.fsmonitor` command are programs the repository chooses; plumbing such as
`update-ref` or `apply --cached` would run them (`reference-transaction`,
`post-index-change`). Every internal call therefore turns hooks and fsmonitor off on
its command line, which outranks every configuration file.
"""

from __future__ import annotations

__all__ = ["NO_TEMPLATE", "SAFE_CONFIG", "git_argv"]

SAFE_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
"""`-c` options given to every internal git call: no hook, no fsmonitor."""

NO_TEMPLATE = "--template="
"""For `git init` and `git clone`: copy no template (and so no hook) into the new repository."""


def git_argv(*args: str) -> list[str]:
    """`["git", <hooks and fsmonitor off>, *args]`; `init`/`clone` also get `--template=`."""
    extra = [NO_TEMPLATE] if args and args[0] in {"init", "clone"} else []
    return ["git", *SAFE_CONFIG, *args[:1], *extra, *args[1:]]
