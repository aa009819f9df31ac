"""Tests of the groundedness benchmark protocol: fold assignment, both protocols, metrics."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.corroborators.ragtruth_files import make_official

from ragwarrant.corroborators.benchmark import Confusion, fold_of, run_groundedness_bench
from ragwarrant.corroborators.ragtruth import load_ragtruth


def test_fold_assignment_groups_by_source_and_depends_on_seed() -> None:
    """A source's fold is a pure function of (seed, source_id); seeds reshuffle folds."""
    ids = [str(i) for i in range(200)]
    assert [fold_of(s, 0, 5) for s in ids] == [fold_of(s, 0, 5) for s in ids]
    assert [fold_of(s, 0, 5) for s in ids] != [fold_of(s, 1, 5) for s in ids]
    assert set(fold_of(s, 0, 5) for s in ids) == {0, 1, 2, 3, 4}


def test_fold_is_the_first_eight_hash_bytes_big_endian_mod_k() -> None:
    """fold_of is sha256(f"{seed}:{source_id}"), first 8 bytes big endian, mod k."""
    for sid in ("0", "17", "source-x", "ünïcode"):
        digest = hashlib.sha256(f"3:{sid}".encode()).digest()
        assert fold_of(sid, 3, 7) == int.from_bytes(digest[:8], "big") % 7


def test_confusion_metrics_match_their_formulas() -> None:
    """Precision tp/flagged, recall tp/positives, F1 2tp/(flagged+positives), FNR 1 − recall."""
    c = Confusion(n=10, n_positive=4, n_flagged=5, true_positives=3)
    assert (c.precision, c.recall, c.f1, c.false_negative_rate) == (0.6, 0.75, 6 / 9, 0.25)


def test_confusion_metrics_are_none_when_undefined() -> None:
    """Nothing flagged and no positive: every metric is None, never NaN."""
    c = Confusion(n=3, n_positive=0, n_flagged=0, true_positives=0)
    assert (c.precision, c.recall, c.f1, c.false_negative_rate) == (None, None, None, None)


def test_official_protocol_calibrates_on_train_only(tmp_path: Path) -> None:
    """The official protocol calibrates one threshold per gate on train and scores test only."""
    report = run_groundedness_bench(load_ragtruth(make_official(tmp_path)))
    assert report.n_train == 5 and report.n_evaluated == 3
    assert report.thresholds["QA"]["coverage"] == [0.6]
    assert report.folds is None and report.seed is None


def test_content_combiner_is_fitted_without_length_features(tmp_path: Path) -> None:
    """combined_content's model has no feature that grows with length; combined keeps them."""
    import numpy as np

    from ragwarrant.corroborators.benchmark import _fit, _score_all
    from ragwarrant.corroborators.features import CONTENT_FEATURES, FEATURES, LENGTH_FEATURES

    data = load_ragtruth(make_official(tmp_path))
    scored = _score_all(data)
    fit = _fit(scored, np.ones(len(data.records), dtype=bool), "QA", "test")
    assert fit.models["combined_content"].features == CONTENT_FEATURES
    assert fit.models["combined"].features == FEATURES
    assert not set(LENGTH_FEATURES) & set(CONTENT_FEATURES)
    assert set(LENGTH_FEATURES) < set(FEATURES)
