"""The job's documented input limits, one home for each (docs/contract.md, "Limits").

A run refuses an input past a limit with a typed error that names the limit and the value found,
before allocating for it: a contract past a count limit is a ``ContractError`` (exit 78), an
evidence file past a size or depth limit an ``EvidenceError`` (the run BLOCKs). The defaults are
generous for real use: the largest exports and contracts seen are far below them.
"""

from __future__ import annotations

MAX_CANDIDATES = 64
"""Candidates in one contract (each costs a full set of paired bootstraps); a contract's
``limits.candidates`` may raise it up to ``CEILING_CANDIDATES``."""

CEILING_CANDIDATES = 256

MAX_PROTECTED_SLICES = 256
"""Protected slices in one contract (each is a noninferiority test per candidate); a contract's
``limits.protected_slices`` may raise it up to ``CEILING_PROTECTED_SLICES``."""

CEILING_PROTECTED_SLICES = 4096

MAX_METRICS = 64
"""Quality metrics, and operational metrics, in one contract (each list on its own)."""

MAX_EVIDENCE_SOURCES = 64
"""Evidence sources in one contract."""

MAX_EVIDENCE_ROWS = 100_000_000
"""Canonical evidence rows (policy × example × metric) of one source: 10^6 paired examples of
two policies and 50 metrics; checked once the source is read, before it is indexed. A
contract's ``limits.evidence_rows`` may raise it up to ``CEILING_EVIDENCE_ROWS``."""

CEILING_EVIDENCE_ROWS = 1_000_000_000

MAX_EVIDENCE_FILE_BYTES = 4 << 30
"""Size of one evidence file, or of one part file of a dataset directory (4 GiB; the 10^6-pair
benchmark's files are well under 1 GiB): checked from the file's size before any byte is read,
so reading stays within the machine's memory."""

MAX_DATASET_PARTS = 10_000
"""Part files of one dataset directory (a Hive-partitioned or sharded export): each part costs
Arrow a fragment and its metadata (about 25 KB even when empty), so 10,000 parts bound that at
about 250 MB; the 10^6-pair benchmark's datasets have under 100 parts."""

MAX_CONTRACT_BYTES = 512 << 10
"""Size of the contract file (512 KiB; the shipped examples are under 5 KiB, and a contract at
every count ceiling under 400 KiB): it is parsed whole, by PyYAML in pure Python (seconds per
MiB)."""

MAX_CONFIG_BYTES = 1 << 20
"""Size of one policy config (1 MiB; prompts included, real configs are kilobytes): it is parsed
whole, with a line map, and compared leaf by leaf."""

MAX_YAML_NODES = 1_000_000
"""Nodes a YAML document holds once its aliases are expanded (a "billion laughs" is refused)."""

MAX_YAML_DEPTH = 200
"""Nesting depth of a YAML document (mappings and lists inside each other)."""

MAX_INTEGER_DIGITS = 40
"""Digits of an integer in a YAML document (a 64-bit integer has at most 20)."""

MAX_JSON_DEPTH = 128
"""Nesting depth of one JSON document or JSON-lines line of evidence, checked before any JSON
parser sees it (Arrow's JSON reader overflows its stack on deep nesting)."""

MAX_CSV_FIELD_CHARS = 131_072
"""Characters of one CSV header field or labels field (``csv.field_size_limit``'s default)."""

MAX_REVIEW_FILE_BYTES = 256 << 20
"""Bytes of one review queue or human labels file (a million labelled items fit)."""

MAX_SCALE_MAGNITUDE = 1e143
"""Largest ``|low|`` or ``|high|`` of a quality metric's scale: a value on the scale (or put at
its worst end by ``on_missing: worst``) must be aggregable without float64 overflow over the
most examples a run may hold, ``stats.magnitude.max_safe_magnitude(CEILING_EVIDENCE_ROWS)``
(about 3.4e143). A scale of [-1e308, 1e308] had a width of ``inf`` and crashed the run."""

MAX_SCALE_TO_MARGIN = 1e12
"""Largest ratio of a scale's larger end magnitude ``max(|low|, |high|)`` to a noninferiority
margin. float64 keeps a relative precision of 2^-52 (about 2.2e-16): a value of magnitude M in a
sum of n terms carries a rounding error up to M·2^-52 per addition, and the statistics centre,
sum and resample n such terms (numpy's pairwise sums: about log2(n) roundings; a plain running
sum: n). At M = 10^12 margins one rounding is 2.2e-4 margins, and 30 of them (10^9 terms
pairwise) stay under 1 % of a margin; at 10^17 (a 1e17 outlier against a 0.02 margin on a
[0, 1e18] scale) the sums lost the 0.1 losses of the other examples and the run wrongly
PROMOTEd."""

MIN_ALPHA = 1e-12
"""Smallest ``statistics.alpha``. The level is split further (Holm over metrics and slices, a
sequential plan's looks) and inverted (``20 / alpha`` resamples, ``log2(1 / alpha)`` units): a
subnormal level such as 5e-324 overflowed to ``inf`` there (exit 70). The bootstrap's Monte Carlo
guard cannot reject below about 1e-4 anyway (``-ln(alpha) / B`` with B <= 100,000)."""

UINT64_MAX = 2**64 - 1
"""The largest seed: seeds are unsigned 64-bit integers."""
