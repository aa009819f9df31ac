"""The package version: a leaf module, so importing it never imports the rest of the package."""

from __future__ import annotations

__all__ = ["__version__", "lexical_implementation"]

__version__ = "0.1.0"


def lexical_implementation() -> str:
    """Which lexical scorer runs in this interpreter: ``"native"`` or ``"python"``.

    What ``ragwarrant.corroborators.lexical.IMPLEMENTATION`` says, found without importing the
    corroborators (and numpy): ``"native"`` when the C extension ``corroborators/_lexscan`` beside
    this file loads, else ``"python"``. For ``ragwarrant --version``.
    """
    from importlib.machinery import EXTENSION_SUFFIXES
    from importlib.util import module_from_spec, spec_from_file_location
    from pathlib import Path

    folder = Path(__file__).parent / "corroborators"
    for suffix in EXTENSION_SUFFIXES:
        path = folder / f"_lexscan{suffix}"
        spec = spec_from_file_location("ragwarrant.corroborators._lexscan", path)
        if spec is None or not path.is_file():
            continue
        try:
            module_from_spec(spec)
        except ImportError:
            continue
        return "native"
    return "python"
