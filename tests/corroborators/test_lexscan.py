"""The native lexical scanner (``_lexscan.c``) against the Python scorer it accelerates.

Every test compares the C path with the Python one exactly (``==``, never approximately): tokens,
context token sets, and every score and count, uncached and with a ``ContextIndex``.
"""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from dataclasses import astuple
from pathlib import Path

import pytest
from bench import lexical_reference as reference
from tests.corroborators.test_lexical import _REFERENCE_PIECES

from ragwarrant.corroborators import lexical
from ragwarrant.corroborators.lexical import ContextIndex, index_context, score_response, tokenize

REPO = Path(__file__).resolve().parents[2]
NATIVE = lexical._NATIVE
needs_native = pytest.mark.skipif(NATIVE is None, reason="the _lexscan extension is not built")


def test_native_extension_is_importable_when_required() -> None:
    """With RAGWARRANT_REQUIRE_NATIVE=1 (CI) a missing extension fails; without it, skips."""
    if NATIVE is None:
        if os.environ.get("RAGWARRANT_REQUIRE_NATIVE") == "1":
            pytest.fail(
                "RAGWARRANT_REQUIRE_NATIVE=1 but ragwarrant.corroborators._lexscan is absent"
            )
        pytest.skip("the _lexscan extension is not built (set RAGWARRANT_REQUIRE_NATIVE=1 to fail)")
    assert lexical.IMPLEMENTATION == "native"


def _python_scores(response: str, passages: list[str]) -> tuple[object, object]:
    uncached = astuple(lexical._python_score_response(response, passages))
    index = lexical._python_index_context(passages)
    return uncached, astuple(lexical._python_score_response(response, index))


def assert_same(response: str, passages: list[str]) -> None:
    """C and Python give the same tokens, context set and scores for (response, passages)."""
    assert NATIVE is not None
    python_index = lexical._python_index_context(passages)
    assert index_context(passages) == python_index, passages
    assert tokenize(response) == lexical._python_tokenize(response), response
    uncached, cached = _python_scores(response, passages)
    assert astuple(score_response(response, passages)) == uncached, (response, passages)
    assert astuple(score_response(response, python_index)) == cached, (response, passages)
    assert uncached == cached


# ---------------------------------------------------------------- committed texts


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def committed_examples() -> list[tuple[str, list[str]]]:
    """(response, passages) of the texts committed in examples/ and tests/data/.

    The repository holds no RAGTruth text (examples/ragtruth-generators keeps hashes and labels
    only; see its DERIVATION.json): the responses and passages of the corroboration demo, the
    Ragas, DeepEval and LangSmith exports, and the RAGTruth-layout test copies stand in.
    """
    examples: list[tuple[str, list[str]]] = []
    demo = REPO / "examples" / "corroboration-demo" / "evidence" / "results.csv"
    with demo.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            examples.append((row["response"], json.loads(row["contexts"])))
    exports = REPO / "tests" / "data" / "exports"
    for path in sorted(exports.rglob("*.jsonl")) + sorted(exports.rglob("*.json")):
        lines = path.read_text(encoding="utf-8").splitlines()
        docs = (
            [json.loads(line) for line in lines if line.strip()] if path.suffix == ".jsonl" else []
        )
        if path.suffix == ".json":
            docs = [json.loads(path.read_text(encoding="utf-8"))]
        texts = [s for doc in docs for s in _strings(doc)]
        examples += [(text, texts[max(0, i - 8) : i + 8]) for i, text in enumerate(texts)]
    from tests.corroborators import ragtruth_files

    texts = [s for source in ragtruth_files.SOURCES for s in _strings(source)]
    texts += [ragtruth_files.GROUNDED, ragtruth_files.UNSUPPORTED, ragtruth_files.PARTLY]
    examples += [(text, texts) for text in texts]
    return examples


@needs_native
def test_committed_texts_score_identically() -> None:
    """Every committed response and passage: C and Python agree on tokens and every score."""
    examples = committed_examples()
    assert len(examples) > 500
    for response, passages in examples:
        assert_same(response, passages)


# ---------------------------------------------------------------- random texts

PIECES = [
    *_REFERENCE_PIECES,  # numbers, CamelCase, closers, breaks, sigma, dotted capital I, Kelvin
    *[
        "snake_case",
        "__init__",
        "ABCdef",
        "aB",
        "Ab",
        "AB",
        "ab",
        "0.0",
        "00.50",
        "123,4567",
        "1234,567",
        "0:0",
        "00:000:1",
    ],
    "σς",
    "ǅ",  # titlecase digraph
    "ß",
    "ﬁ",  # ligature
    "１２",  # fullwidth digits (decimal, not ASCII)
    "１２,３４５",
    "٣:٠٥",
    "١٢.٥٠",
    "٣,٣٣٣",
    "²",  # a digit, not decimal
    "½",
    "e\u0301",  # combining acute
    "\u0301",
    "a\u200db",  # zero-width joiner
    "中文",
    "\u3000",
    "\x85",
    "\x1f",
    "\x00",
    "? ",
    ".\u201d ",
    "!\u2019 ",
    ".\n",
    "",
]


def random_text(rng: random.Random, n_pieces: int) -> str:
    """Pieces glued with or without a space: numbers, CamelCase, non-ASCII, breaks, blanks."""
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", ""]) for _ in range(n_pieces))


@needs_native
def test_random_texts_score_identically() -> None:
    """4000 seeded random texts mixing every tricky class: C and Python agree exactly."""
    rng = random.Random(20261202)
    for _ in range(4000):
        response = random_text(rng, rng.randint(0, 30))
        passages = [random_text(rng, rng.randint(0, 40)) for _ in range(rng.randint(1, 3))]
        assert_same(response, passages)


@needs_native
def test_random_texts_tokenise_like_the_regex_definition() -> None:
    """The C tokens equal the regex reference's (bench/lexical_reference.py) on random texts."""
    rng = random.Random(5)
    for _ in range(3000):
        text = random_text(rng, rng.randint(0, 30))
        assert NATIVE is not None
        assert NATIVE.tokens(text) == reference.tokenize(text), text
        assert NATIVE.context_tokens(text) == reference.index_context(text).tokens, text


def _chunks(codes: list[int], size: int) -> Iterator[str]:
    for start in range(0, len(codes), size):
        yield " ".join(map(chr, codes[start : start + size]))


@needs_native
def test_every_code_point_is_classified_like_sre() -> None:
    """Each code point alone, between spaces: the C tokens equal the regex reference's, so
    Py_UNICODE_ISALNUM, lowering and the ASCII tables agree with [^\\W_]+ on all of Unicode."""
    assert NATIVE is not None
    for text in _chunks(list(range(sys.maxunicode + 1)), 4096):
        assert NATIVE.tokens(text) == reference.tokenize(text)


@needs_native
def test_every_decimal_digit_forms_numbers_like_the_regex() -> None:
    """Every Unicode decimal digit (\\d) in each number form: C tokens equal the reference's."""
    assert NATIVE is not None
    digits = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isdecimal()]
    for d in digits:
        for form in (
            "{0},{0}{0}{0}.{0}0",
            "{0}:{0}",
            "{0}{0}.{0}",
            "{0}.{0}.{0}",
            "{0},{0}{0}{0}{0}",
        ):
            text = form.format(d) + " x" + form.format(d)
            assert NATIVE.tokens(text) == reference.tokenize(text), text


@needs_native
def test_sentence_breaks_at_every_whitespace_character() -> None:
    """A break after '.', '.' and a closer, or a line break, for every \\s character."""
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    for space in spaces:
        for response in (
            f"alpha beta gamma delta epsilon.{space}zeta eta theta iota kappa",
            f"alpha beta gamma delta epsilon.){space}zeta eta theta iota kappa",
            f"alpha beta gamma delta epsilon{space}zeta eta theta iota kappa",
        ):
            assert_same(response, ["alpha beta gamma delta epsilon"])


# ---------------------------------------------------------------- edges and errors


@needs_native
def test_long_time_fields_go_to_the_python_scorer() -> None:
    """A time field beyond 640 digits (where int() may refuse) is left to the Python scorer."""
    assert NATIVE is not None
    response = "at 1:" + "0" * 700 + "5 today"
    assert NATIVE.score(response, "x") is None
    assert NATIVE.tokens(response) is None
    assert NATIVE.context_tokens(response) is None
    assert astuple(score_response(response, ["x"])) == _python_scores(response, ["x"])[0]
    assert index_context(response) == lexical._python_index_context(response)
    assert NATIVE.tokens("1:" + "0" * 639 + "7") == ["1:07"]  # 640 digits: still native


@needs_native
@pytest.mark.parametrize("bad", [None, b"bytes", 3, ["list"]])
def test_non_str_input_raises_type_error(bad: object) -> None:
    """Every entry point refuses non-str text with a TypeError naming what it got."""
    assert NATIVE is not None
    with pytest.raises(TypeError, match="must be str"):
        NATIVE.score(bad, "context")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be str"):
        NATIVE.score("response", bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be str"):
        NATIVE.score_known(bad, frozenset())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be str"):
        NATIVE.tokens(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be str"):
        NATIVE.context_tokens(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be str"):
        score_response(bad, "context")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be str"):
        tokenize(bad)  # type: ignore[arg-type]


@needs_native
def test_scanner_refuses_bad_arguments() -> None:
    """Wrong arity, a non-set of known tokens and non-str stop words raise TypeError."""
    assert NATIVE is not None
    with pytest.raises(TypeError, match="takes"):
        NATIVE.score("only one")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="set or frozenset"):
        NATIVE.score_known("response", ["a"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be str"):
        type(NATIVE)(["a", 1], 5)  # type: ignore[list-item]
    with pytest.raises(TypeError):
        type(NATIVE)(7, 5)  # type: ignore[arg-type]


@needs_native
def test_repeated_calls_leak_no_memory() -> None:
    """10,000 calls (results and errors) leave the traced heap and the inputs' refcounts as they
    were: nothing allocated on a path, error paths included, is kept."""
    assert NATIVE is not None
    response, context = (
        "Alpha beta 4.50 at 17:0. GammaDelta ΟΔΟΣ!\nx",
        "alpha RestaurantsTakeOut 4.5",
    )
    known = index_context(context).tokens

    def calls() -> None:
        for _ in range(2000):
            NATIVE.score(response, context)
            NATIVE.score_known(response, known)
            NATIVE.tokens(response)
            NATIVE.context_tokens(context)
            with pytest.raises(TypeError):
                NATIVE.score(response, b"x")  # type: ignore[arg-type]

    calls()  # warm caches (the lowered-string method lookup, exception machinery)
    refs = (sys.getrefcount(response), sys.getrefcount(context), sys.getrefcount(known))
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    calls()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert after - before < 10_000
    assert (sys.getrefcount(response), sys.getrefcount(context), sys.getrefcount(known)) == refs


def test_context_index_of_either_implementation_is_a_frozenset() -> None:
    """index_context gives a ContextIndex of a frozenset of str whichever scorer runs."""
    index = index_context(["Alpha WiFi", "4.50"])
    assert isinstance(index, ContextIndex)
    assert type(index.tokens) is frozenset
    assert index.tokens == {"alpha", "wifi", "wi", "fi", "4.5"}


def test_without_the_extension_the_python_scorer_runs_with_the_same_scores() -> None:
    """With the extension's import failing, the module loads, says "python" and scores the same."""
    texts = [
        ("Alpha beta 4.50 at 17:0. Gamma delta epsilon zeta eta!\nWiFi", ["alpha 4.5 wi fi"]),
        ("ΟΔΟΣ İx １２,３４５ naïve.", ["οδος x"]),
    ]
    program = (
        "import json, sys\n"
        "sys.modules['ragwarrant.corroborators._lexscan'] = None  # the import raises\n"
        "from dataclasses import astuple\n"
        "from ragwarrant.corroborators import lexical\n"
        "texts = json.loads(sys.argv[1])\n"
        "print(json.dumps([lexical.IMPLEMENTATION, lexical._NATIVE is None,\n"
        "    [astuple(lexical.score_response(r, c)) for r, c in texts],\n"
        "    [lexical.tokenize(r) for r, _ in texts]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, json.dumps(texts)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    implementation, no_native, scores, tokens = json.loads(done.stdout)
    assert (implementation, no_native) == ("python", True)
    assert scores == [list(astuple(score_response(r, c))) for r, c in texts]
    assert tokens == [tokenize(r) for r, _ in texts]


def test_version_output_names_the_scorer_that_runs() -> None:
    """``ragwarrant --version`` says which lexical scorer this interpreter runs, as the module."""
    from ragwarrant.version import lexical_implementation

    assert lexical_implementation() == lexical.IMPLEMENTATION
    done = subprocess.run(
        [sys.executable, "-m", "ragwarrant", "--version"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert done.stdout.strip().endswith(f"(lexical scorer: {lexical.IMPLEMENTATION})")


def test_report_names_the_scorer_and_a_replay_ignores_it() -> None:
    """The corroboration line of report.md names the scorer (none in older records); replays
    compare everything else, since both scorers give bit-identical scores."""
    from types import SimpleNamespace

    from tests.gates.test_corroboration import summary

    from ragwarrant.audit.report import corroboration_lines
    from ragwarrant.audit.verify import REPLAY_IGNORED_FIELDS

    def line(implementation: str | None) -> str:
        c = summary([]).model_copy(update={"lexical_implementation": implementation})
        lines = corroboration_lines(SimpleNamespace(corroboration=c))  # type: ignore[arg-type]
        return next(x for x in lines if x.startswith("- deterministic check"))

    assert "…`, native scorer); " in line("native")
    assert "…`, python scorer); " in line("python")
    assert "scorer" not in line(None)
    assert "lexical_implementation" in REPLAY_IGNORED_FIELDS
