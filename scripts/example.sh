#!/usr/bin/env bash
# Set up, then apply the bundled example (a model's reply: prose, a fence, a sloppy diff)
# to a scratch copy of examples/greeting/workspace: first as a dry run, then for real.
source "$(dirname "$0")/_venv.sh"
scratch="$(mktemp -d)"
cp -R examples/greeting/workspace/. "$scratch"
echo "== dry run (--check): the exact diff that would be written"
.venv/bin/patchsmith apply examples/greeting/model-reply.md -C "$scratch" --check
echo "== apply"
.venv/bin/patchsmith apply examples/greeting/model-reply.md -C "$scratch" --json
echo "== result: $scratch/src/greeting.py"
cat "$scratch/src/greeting.py"
