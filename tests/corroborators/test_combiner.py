"""Tests of the numpy logistic regression against closed forms and its JSON round trip."""

from __future__ import annotations

import numpy as np
import pytest

from ragwarrant.corroborators.combiner import LogisticModel, fit_logistic


def test_gradient_of_penalised_loss_is_zero_at_the_fit() -> None:
    """At the optimum X'(p − y) + l2·beta = 0 on standardised features (intercept unpenalised)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 3))
    y = rng.random(300) < 1 / (1 + np.exp(-(x @ [1.5, -1.0, 0.0])))
    model = fit_logistic(x, y, ("a", "b", "c"), l2=2.0)
    z = (x - model.mean) / model.scale
    p = model.score(x)
    assert np.sum(p - y) == pytest.approx(0.0, abs=1e-6)
    assert z.T @ (p - y) + 2.0 * model.coef == pytest.approx(np.zeros(3), abs=1e-6)
    assert model.coef[0] > 0 > model.coef[1]


def test_intercept_only_fit_is_the_log_odds_of_the_base_rate() -> None:
    """A constant feature leaves the intercept at logit(mean(y))."""
    model = fit_logistic(np.ones((10, 1)), [1, 1, 1, 0, 0, 0, 0, 0, 0, 0], ("k",))
    assert model.intercept == pytest.approx(np.log(3 / 7))
    assert model.score([[1.0]])[0] == pytest.approx(0.3)


def test_json_round_trip_and_invalid_models() -> None:
    """as_json/from_json round-trip; wrong lengths or a zero scale are rejected."""
    model = fit_logistic([[0.0], [1.0], [2.0], [3.0]], [0, 1, 0, 1], ("k",))
    again = LogisticModel.from_json(model.as_json())
    assert again.score([[1.5]])[0] == model.score([[1.5]])[0]
    with pytest.raises(ValueError, match="must each hold 1"):
        LogisticModel.from_json({**model.as_json(), "coef": [1.0, 2.0]})
    with pytest.raises(ValueError, match="positive"):
        LogisticModel.from_json({**model.as_json(), "scale": [0.0]})


def test_single_class_labels_cannot_be_fitted() -> None:
    """One class only: no logistic fit exists."""
    with pytest.raises(ValueError, match="both classes"):
        fit_logistic([[0.0], [1.0]], [1, 1], ("k",))
