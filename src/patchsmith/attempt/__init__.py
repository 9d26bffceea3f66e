"""The attempt layer: one change to a workspace, from input to record.

It owns `apply` (`api.py`), `propose`, `read_file`/`write_file` (`direct.py`), the shared
record-guard-commit step (`_attempt.py`) and a proposal's pre- and postconditions
(`conditions.py`). It sits among the workflows (`verify`, `commands`, `codemod`,
`pipeline`), which it may import and which may import it, above `store`, `guards`,
`runtime`, `model`, `formats`, `engine` and `errors` (docs/architecture.md).
"""
