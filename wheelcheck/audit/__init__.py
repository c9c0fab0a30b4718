"""Checks over one wheel: the verdict (which tag it deserves under a policy) and the hygiene checks."""
