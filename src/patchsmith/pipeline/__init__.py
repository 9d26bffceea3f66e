"""Workflows over whole runs: judging attempts and runs, freezing a run's net change,
reverting an applied attempt.

Each module is one idea: `judge` (a deterministic rubric plus an optional hook),
`freeze` (a run's composed diff, and a commit on a new git branch), `revert` (undo
one attempt through the normal transaction), `rewind` and `recorded` (undoing
recorded diffs in memory, exactly). Import from the modules; nothing here loads
them eagerly.
"""
