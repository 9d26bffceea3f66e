"""The runtime layer: the workspace and what changes it.

It owns paths and text files, the transaction and its commit journal, intake (locating an
`EditScript` against the files), processes and the sandbox, trust and consent, and the
scanners below the guards (`secrets`, `syntax`, `diffstat`). It may import `model`,
`formats`, `engine` and `errors`, never `policy`, a guard or anything above
(docs/architecture.md).
"""
