"""``pair_metric`` against a per-example Python reference, on narrow and wide scopes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragwarrant.contract import Direction, MissingValuePolicy, QualityMetric
from ragwarrant.evidence.index import build_index
from ragwarrant.evidence.schema import make_evidence_table
from ragwarrant.gates.paired import pair_metric
from tests.evidence.test_index import _random_rows


def _reference(idx, metric, scope, quality, on_missing):  # type: ignore[no-untyped-def]
    """Example by example: which pair, their values and the counts ``PairedMetric`` holds."""
    cb, cc = idx.columns[("base", metric)], idx.columns[("cand", metric)]
    worst = best = math.nan
    if quality is not None:
        low, high = quality.scale
        worst, best = (low, high) if quality.direction.sign > 0 else (high, low)
    impute = on_missing is MissingValuePolicy.WORST and quality is not None
    out = {"examples": [], "cand": [], "base": [], "either": 0, "imputed": 0}
    out |= {"miss_c": 0, "miss_b": 0, "unp_c": 0, "unp_b": 0}
    for e in np.flatnonzero(scope).tolist():
        vb, vc = float(cb.value[e]), float(cc.value[e])
        if impute and cb.missing[e]:
            vb, out["imputed"] = best, out["imputed"] + 1
        if impute and cc.missing[e]:
            vc, out["imputed"] = worst, out["imputed"] + 1
        fin_b = bool(cb.has_row[e]) and math.isfinite(vb)
        fin_c = bool(cc.has_row[e]) and math.isfinite(vc)
        out["either"] += bool(cb.has_row[e] or cc.has_row[e])
        out["miss_b"] += bool(cb.missing[e] or cb.infinite[e])
        out["miss_c"] += bool(cc.missing[e] or cc.infinite[e])
        out["unp_c"] += fin_b and not fin_c
        out["unp_b"] += fin_c and not fin_b
        if fin_b and fin_c:
            out["examples"].append(e)
            out["cand"].append(vc)
            out["base"].append(vb)
    return out


@pytest.mark.parametrize("on_missing", list(MissingValuePolicy))
@pytest.mark.parametrize("direction", list(Direction))
def test_pairs_on_narrow_and_wide_scopes_equal_the_reference(on_missing, direction):
    """A protected slice's scope (under half the examples: paired on its own examples), an
    empty one, a wide one and every example pair as the loop says, missing and infinite
    values, absent rows and imputation included."""
    idx = build_index(make_evidence_table(_random_rows(5, 400, False)))
    quality = QualityMetric(
        id="m1", direction=direction, scale=(0.0, 1.0), margin_abs=0.05, on_missing=on_missing
    )
    rng = np.random.default_rng(1)
    n = idx.n_examples
    scopes = [idx.in_slice("s1"), rng.random(n) < 0.1, np.zeros(n, dtype=bool)]
    scopes += [rng.random(n) < 0.9, np.ones(n, dtype=bool)]
    assert 0 < scopes[0].sum() <= n // 2 < scopes[3].sum()
    for scope in scopes:
        pm = pair_metric(idx, "m1", "base", "cand", scope, quality, on_missing)
        ref = _reference(idx, "m1", scope, quality, on_missing)
        assert pm.examples.tolist() == ref["examples"]
        assert pm.candidate.tolist() == ref["cand"] and pm.baseline.tolist() == ref["base"]
        assert (pm.either, pm.imputed) == (ref["either"], ref["imputed"])
        assert (pm.missing_candidate, pm.missing_baseline) == (ref["miss_c"], ref["miss_b"])
        assert (pm.unpaired_candidate, pm.unpaired_baseline) == (ref["unp_c"], ref["unp_b"])
