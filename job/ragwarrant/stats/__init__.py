"""Pure numpy/scipy statistics: arrays in, frozen results out, ``rng`` passed in.

No Arrow, pydantic, logging or I/O here. ``onesided`` is the one home of bounds and p-values;
``noninferiority.test_noninferiority`` is the noninferiority decision rule of issue 10.
``distributions`` and ``roots`` hold the distribution functions and the root finder the gates
use, scipy.stats' and scipy.optimize's floats without importing either (issue 13).
"""

from ragwarrant.stats.bootstrap import BootstrapResult, Statistic, paired_bootstrap
from ragwarrant.stats.holm import holm_levels
from ragwarrant.stats.noninferiority import MetricKind, min_units_for_margin, test_noninferiority
from ragwarrant.stats.onesided import OneSidedTest, OrientedBootstrap, oriented_bootstrap
from ragwarrant.stats.paired_binary import tango_test
from ragwarrant.stats.power import additional_pairs_needed
from ragwarrant.stats.seeding import make_rng

__all__ = [
    "BootstrapResult",
    "MetricKind",
    "OneSidedTest",
    "OrientedBootstrap",
    "Statistic",
    "additional_pairs_needed",
    "holm_levels",
    "make_rng",
    "min_units_for_margin",
    "oriented_bootstrap",
    "paired_bootstrap",
    "tango_test",
    "test_noninferiority",
]
