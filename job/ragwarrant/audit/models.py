"""Re-export of the output models, which live in the leaf module ``ragwarrant.outputs``."""

from ragwarrant.outputs import *  # noqa: F403
from ragwarrant.outputs import __all__  # noqa: F401
