"""`python -m patchsmith`: the `patchsmith` command."""

import sys

from patchsmith.cli import main

sys.exit(main())
