"""The model layer: the values every layer above shares.

It owns what an attempt is about and what it answers: the proposal (`proposal`), the
report (`report`) with its model-facing feedback, and the evidence of verification
(`evidence`). It may import `patchsmith.errors`, `patchsmith.engine` and
`patchsmith.formats`, nothing above them (docs/architecture.md).
"""
