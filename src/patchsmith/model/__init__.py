"""The model layer: the values every layer above shares.

It owns what an attempt is about and what it answers: the proposal (`proposal`), the policy
and its schema (`policy`, `_policy_schema`), the report (`report`) and the evidence of
verification (`evidence`). It may import `patchsmith.errors`, `patchsmith.engine` and
`patchsmith.formats`, nothing above them (docs/architecture.md).
"""
