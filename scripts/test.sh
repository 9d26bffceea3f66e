#!/usr/bin/env bash
# Set up and run everything CI runs: lint, format check, strict typing, the layer contracts
# (docs/architecture.md), the whole test suite.
source "$(dirname "$0")/_venv.sh"
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy --strict --no-incremental src
.venv/bin/lint-imports --no-cache
.venv/bin/python -m pytest -p no:cacheprovider --cov=patchsmith --cov-report=term "$@"
