"""`python -m patchsmith`: the `patchsmith` command."""

import sys

from patchsmith.cli import console

sys.exit(console())
