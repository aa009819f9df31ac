"""Pure numpy/scipy statistics: arrays in, frozen results out, ``rng`` passed in.

No Arrow, pydantic, logging or I/O here.
"""

from ragwarrant.stats.bootstrap import BootstrapResult, paired_bootstrap
from ragwarrant.stats.holm import holm_levels
from ragwarrant.stats.power import additional_pairs_needed

__all__ = ["BootstrapResult", "additional_pairs_needed", "holm_levels", "paired_bootstrap"]
