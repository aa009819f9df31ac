"""Type stub of the optional C extension ``_lexscan.c`` (see ``lexical.IMPLEMENTATION``)."""

from collections.abc import Iterable

class Scanner:
    """Tokens and counts of ``lexical``; each method returns None where the Python scorer must
    decide (a time field of more than 640 digits). Raises TypeError for non-str input."""

    def __init__(self, stop_words: Iterable[str], min_sentence_content_tokens: int) -> None: ...
    def score(
        self, response: str, context: str
    ) -> tuple[int, int, int, int, int, float, int] | None: ...
    def score_known(
        self, response: str, known: frozenset[str] | set[str]
    ) -> tuple[int, int, int, int, int, float, int] | None: ...
    def tokens(self, text: str) -> list[str] | None: ...
    def context_tokens(self, text: str) -> frozenset[str] | None: ...
