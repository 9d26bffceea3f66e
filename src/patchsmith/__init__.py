"""patchsmith: apply the edits language models write, safely."""

from patchsmith.errors import FailureCode, PartialApplyError, PatchFailure, PatchRefused, PatchsmithError

__all__ = ["FailureCode", "PartialApplyError", "PatchFailure", "PatchRefused", "PatchsmithError"]
__version__ = "0.1.0"
