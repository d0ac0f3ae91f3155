"""ML-NA: cumulative daily features, k-means labels, XGBoost classifier, model files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hedge.errors import HedgeError
from hedge.nodes.features import (
    choose_k,
    kmeans_labels,
    period_features,
    weak_cluster,
)
from hedge.nodes.mlna import MLNA, MLNAParams, WeakNodeClassifier
from hedge.nodes.normalize import NormalizedDurations
from hedge.nodes.synthetic import synthetic_history

NAN = np.nan


def test_period_features_hand_computed():
    # day = 10 s, period = 2 days. Node a: z=1 on day 1, z=-1 on day 2, z=0.5 on day 3
    # (period 2). Node b: z=0 and z=2 on day 1, nothing after.
    data = NormalizedDurations(
        node=np.array([0, 0, 1, 1, 0]), nodes=np.array(["a", "b"]),
        z=np.array([1.0, -1.0, 0.0, 2.0, 0.5]), end=np.array([1.0, 12.0, 2.0, 3.0, 25.0]),
        dropped_single=0)
    f = period_features(data, period_days=2, day_seconds=10.0)
    assert f.features.shape == (2, 2, 6)
    # cumulative count shares on day 1: a 1, b 2, typical 1.5; day 2: both 2
    np.testing.assert_allclose(f.features[0, 0], [1, 0, 2 / 3, 0, 1, 1])
    np.testing.assert_allclose(f.features[0, 1], [1, 1, 4 / 3, NAN, NAN, NAN])
    np.testing.assert_allclose(f.filled[0, 1], [1, 1, 4 / 3, 1, 1, 1])
    np.testing.assert_allclose(f.features[1, 0], [0.5, 0, 1, NAN, NAN, NAN])
    assert f.present.tolist() == [[True, True], [True, False]]
    assert np.isnan(f.features[1, 1]).all() and (f.filled[1, 1] == 0).all()
    assert f.period_start.tolist() == [0.0, 20.0]


def test_period_features_rejects_bad_settings_and_empty_input():
    data = NormalizedDurations(node=np.array([0]), nodes=np.array(["a"]), z=np.array([0.0]),
                               end=np.array([1.0]), dropped_single=0)
    with pytest.raises(HedgeError, match="period_days = 0"):
        period_features(data, period_days=0)
    empty = NormalizedDurations(node=np.zeros(0, np.int64), nodes=np.array([]),
                                z=np.zeros(0), end=np.zeros(0), dropped_single=3)
    with pytest.raises(HedgeError, match="nothing to learn from"):
        period_features(empty)


def test_weak_cluster_most_positive_days_then_smallest_std():
    # 2 days x (mean, std, count)
    centres = np.array([[-1, 0.5, 1, -1, 0.5, 1],   # 0 positive days
                        [0.5, 2.0, 1, 0.5, 2.0, 1],  # 2 positive days, avg std 2
                        [0.4, 1.0, 1, 0.4, 1.0, 1],  # 2 positive days, avg std 1 -> weak
                        [0.9, 0.1, 1, -0.2, 0.1, 1]])  # 1 positive day
    assert weak_cluster(centres) == 2


def test_choose_k_moves_to_best_larger_k_while_weak_cluster_is_too_big():
    scores = {2: 50.0, 3: 40.0, 4: 45.0, 5: 10.0, 6: 30.0}
    assert choose_k(scores, {2: 0.2, 3: 0.1, 4: 0.1, 5: 0.1, 6: 0.1}) == 2
    # argmax 2 has 40% weak -> best of {3,4,5,6} is 4 (45) -> ok
    assert choose_k(scores, {2: 0.4, 3: 0.1, 4: 0.2, 5: 0.1, 6: 0.1}) == 4
    # 4 too big as well -> best of {5, 6} is 6
    assert choose_k(scores, {2: 0.4, 3: 0.1, 4: 0.3, 5: 0.1, 6: 0.1}) == 6
    # nothing larger left: keep the last one tried
    assert choose_k(scores, {2: 0.4, 3: 0.1, 4: 0.3, 5: 0.1, 6: 0.5}) == 6


def test_kmeans_labels_find_the_slow_group():
    rng = np.random.default_rng(0)
    normal = np.tile([-0.3, 0.8, 1.0], 5) + rng.normal(0, 0.05, (16, 15))
    slow = np.tile([1.5, 1.2, 1.0], 5) + rng.normal(0, 0.05, (4, 15))
    result = kmeans_labels(np.vstack([normal, slow]))
    assert result.labels.tolist() == [0] * 16 + [1] * 4
    assert set(result.scores) <= set(range(2, 11))
    tiny = kmeans_labels(np.zeros((2, 15)))
    assert tiny.labels.tolist() == [0, 0] and tiny.k == 1


def test_classifier_fit_predict_and_errors():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 6))
    X[rng.random(X.shape) < 0.2] = np.nan  # missing days
    y = (np.nan_to_num(X[:, 0]) > 0.5).astype(int)
    clf = WeakNodeClassifier(n_estimators=30).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (200, 2) and np.allclose(proba.sum(axis=1), 1)
    assert (clf.predict(X) == y).mean() > 0.95
    with pytest.raises(HedgeError, match=r"expected \(n, 6\)"):
        clf.predict_proba(X[:, :3])
    with pytest.raises(HedgeError, match="expected both 0 .* and 1"):
        WeakNodeClassifier().fit(X, np.zeros(200))
    with pytest.raises(HedgeError, match="predict before fit"):
        WeakNodeClassifier().predict(X)


SMALL = MLNAParams(period_days=5, day_seconds=3600.0, window=6, n_estimators=40)


@pytest.mark.slow
def test_mlna_predicts_planted_weak_nodes_on_synthetic_history():
    s = synthetic_history(n_nodes=40, n_periods=8, period_days=5, day_seconds=3600.0, seed=1)
    # train on periods 0..6, predict period 7 from period 6's features
    train = s.history.filter(s.history.column("end").to_numpy() < 7 * s.period_seconds)
    model = MLNA(SMALL).fit(train)
    prediction = model.predict_next(train)
    truth = s.weak[7][np.searchsorted(s.nodes, prediction.nodes)]
    guess = prediction.proba >= 0.5
    assert (guess == truth).mean() >= 0.9
    assert (guess & truth).sum() / truth.sum() >= 0.8


def test_predict_current_uses_the_complete_period_before_now():
    s = synthetic_history(n_nodes=20, n_periods=4, period_days=5, day_seconds=3600.0, seed=3)
    model = MLNA(SMALL).fit(s.history)
    now = 3.5 * s.period_seconds  # inside period 3: predict it from period 2
    current = model.predict_current(s.history, now)
    np.testing.assert_allclose(current.proba, model.predict_next(s.history, period=2).proba)
    assert current.period_start == 2 * s.period_seconds
    with pytest.raises(HedgeError, match="does not include the period before now"):
        model.predict_current(s.history, 10 * s.period_seconds)


def test_mlna_needs_two_periods():
    s = synthetic_history(n_nodes=10, n_periods=1, period_days=5, day_seconds=3600.0)
    with pytest.raises(HedgeError, match="at least 2 are needed"):
        MLNA(SMALL).fit(s.history)


def test_model_save_load_roundtrip_and_bad_files(tmp_path):
    s = synthetic_history(n_nodes=20, n_periods=3, period_days=5, day_seconds=3600.0, seed=2)
    model = MLNA(SMALL).fit(s.history)
    path = tmp_path / "model.json"
    model.save(path)
    loaded = MLNA.load(path)
    assert loaded.params == SMALL
    np.testing.assert_allclose(loaded.predict_next(s.history).proba,
                               model.predict_next(s.history).proba)
    doc = json.loads(path.read_text())

    def bad(change: dict, message: str) -> None:
        other = tmp_path / "bad.json"
        other.write_text(json.dumps({**doc, **change}))
        with pytest.raises(HedgeError, match=message):
            MLNA.load(other)

    bad({"version": 99}, "field 'version' = 99, expected 1")
    bad({"format": "something"}, "field 'format' = 'something'")
    bad({"booster": "{not a booster"}, "damaged ML-NA model")
    bad({"n_features": 90}, "field 'n_features' = 90, expected 15")
    (tmp_path / "text.json").write_text("hello")
    with pytest.raises(HedgeError, match="not JSON"):
        MLNA.load(tmp_path / "text.json")
    with pytest.raises(HedgeError, match="cannot read model"):
        MLNA.load(tmp_path / "missing.json")
