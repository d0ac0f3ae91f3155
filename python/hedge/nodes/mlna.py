"""ML-NA: predict which nodes will be weak in the next period (XGBoost).

``WeakNodeClassifier`` is a scikit-learn style estimator on feature matrices (rows = nodes,
columns = the 3 x period_days features of ``hedge.nodes.features``): gradient-boosted trees
with eta 0.1, max_depth 12 and log-loss; NaN marks missing days and is handled natively by
XGBoost's sparsity-aware splits.

``MLNA`` is the pipeline on task histories: normalise durations, build per-period features,
label every period with k-means, and train on a sliding window of the last ``window``
period pairs (features of period p -> label of period p + 1); ``predict_next`` scores every
node of the latest period for the period after it.

Models are saved as one JSON file holding a format name and version, the ML-NA parameters
and the XGBoost booster; ``load`` refuses anything else with a HedgeError.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import xgboost as xgb

from hedge.errors import HedgeError
from hedge.nodes.features import PeriodFeatures, kmeans_labels, period_features
from hedge.nodes.normalize import normalize

log = logging.getLogger(__name__)

MODEL_FORMAT = "hedge-nodes-mlna"
MODEL_VERSION = 1


class WeakNodeClassifier:
    """Binary classifier: 1 = the node will be weak."""

    def __init__(self, eta: float = 0.1, max_depth: int = 12, n_estimators: int = 100,
                 random_state: int = 0, n_jobs: int = 1) -> None:
        self.eta = eta
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.booster_: xgb.Booster | None = None
        self.n_features_in_: int = 0

    def _params(self) -> dict[str, Any]:
        return {"objective": "binary:logistic", "eval_metric": "logloss", "eta": self.eta,
                "max_depth": self.max_depth, "seed": self.random_state,
                "nthread": self.n_jobs, "tree_method": "hist"}

    def fit(self, X: np.ndarray, y: np.ndarray) -> WeakNodeClassifier:
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        if X.ndim != 2 or len(X) != len(y) or len(y) == 0:
            raise HedgeError(f"classifier fit: X has shape {X.shape} and y {y.shape}; "
                             "expected (n, features) and (n,) with n > 0")
        classes = np.unique(y)
        if not np.isin(classes, (0, 1)).all() or len(classes) < 2:
            raise HedgeError(f"classifier fit: labels are {classes.tolist()}; expected both "
                             "0 (normal) and 1 (weak) among the training rows (use a longer "
                             "history or a shorter period)")
        dtrain = xgb.DMatrix(X, label=y, missing=np.nan)
        self.booster_ = xgb.train(self._params(), dtrain, num_boost_round=self.n_estimators)
        self.n_features_in_ = X.shape[1]
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """(n, 2) array: probability of normal, probability of weak."""
        if self.booster_ is None:
            raise HedgeError("classifier: predict before fit (train or load a model first)")
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise HedgeError(f"classifier: X has shape {X.shape}, expected "
                             f"(n, {self.n_features_in_}) (was the model trained with "
                             "another period length?)")
        weak = self.booster_.predict(xgb.DMatrix(X, missing=np.nan))
        return np.column_stack([1.0 - weak, weak])

    def predict(self, X: np.ndarray) -> np.ndarray:
        return (self.predict_proba(X)[:, 1] >= 0.5).astype(np.int64)


@dataclass
class NodePrediction:
    """Probability that each node is weak in the period after ``period_start``."""

    nodes: np.ndarray
    proba: np.ndarray
    period_start: float

    def weak(self, threshold: float = 0.5) -> np.ndarray:
        return self.nodes[self.proba >= threshold]

    def rows(self) -> list[dict[str, object]]:
        order = np.argsort(-self.proba, kind="stable")
        return [{"node": str(self.nodes[i]), "p_weak": round(float(self.proba[i]), 6)}
                for i in order]


@dataclass
class MLNAParams:
    period_days: int = 30
    day_seconds: float = 86400.0
    window: int = 6            # training period pairs (sliding window)
    by_type: bool = False      # normalise within (job, type)
    max_weak_share: float = 0.25
    eta: float = 0.1
    max_depth: int = 12
    n_estimators: int = 100
    random_state: int = 0


@dataclass
class MLNA:
    """The ML-NA pipeline on task histories (see module docstring)."""

    params: MLNAParams = field(default_factory=MLNAParams)
    classifier: WeakNodeClassifier | None = None

    def features(self, history: pa.Table) -> PeriodFeatures:
        data = normalize(history, by_type=self.params.by_type)
        return period_features(data, self.params.period_days, self.params.day_seconds)

    def labels(self, feats: PeriodFeatures) -> np.ndarray:
        """(n_periods, n_nodes) weak labels; -1 where the node is absent from the period."""
        out = np.full(feats.present.shape, -1, dtype=np.int64)
        for p in range(feats.n_periods):
            rows = feats.present[p]
            if rows.any():
                out[p, rows] = kmeans_labels(feats.filled[p, rows],
                                             max_weak_share=self.params.max_weak_share,
                                             random_state=self.params.random_state).labels
        return out

    def training_set(self, feats: PeriodFeatures,
                     labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows (features of p, label of p + 1) over the last ``window`` period pairs."""
        first = max(0, feats.n_periods - 1 - self.params.window)
        X, y = [], []
        for p in range(first, feats.n_periods - 1):
            rows = feats.present[p] & (labels[p + 1] >= 0)
            X.append(feats.features[p, rows])
            y.append(labels[p + 1, rows])
        if not X:
            raise HedgeError(f"ML-NA training: the history spans {feats.n_periods} period(s) "
                             f"of {feats.period_days} x {feats.day_seconds:g} s; at least 2 "
                             "are needed (use a shorter --period-days or --day-seconds)")
        return np.concatenate(X), np.concatenate(y)

    def fit(self, history: pa.Table) -> MLNA:
        feats = self.features(history)
        X, y = self.training_set(feats, self.labels(feats))
        p = self.params
        self.classifier = WeakNodeClassifier(eta=p.eta, max_depth=p.max_depth,
                                             n_estimators=p.n_estimators,
                                             random_state=p.random_state).fit(X, y)
        log.info("ML-NA trained on %d rows (%d weak) from %d periods", len(y), int(y.sum()),
                 feats.n_periods)
        return self

    def predict_next(self, history: pa.Table, period: int = -1) -> NodePrediction:
        """Weak probabilities for the period after ``period`` (default: the latest in the
        history, even if it is still partial: its unseen days are NaN)."""
        return self._predict(self.features(history), period)

    def predict_current(self, history: pa.Table, now: float) -> NodePrediction:
        """Weak probabilities for the period containing ``now``, from the complete period
        before it (what a live blacklist should use)."""
        feats = self.features(history)
        period_seconds = feats.period_days * feats.day_seconds
        previous = int((now - feats.period_start[0]) // period_seconds) - 1
        if not 0 <= previous < feats.n_periods:
            raise HedgeError(
                f"ML-NA: the history covers {feats.period_start[0]:g} to "
                f"{feats.period_start[-1] + period_seconds:g} s, which does not include the "
                f"period before now ({now:g} s); fetch a longer or more recent history")
        return self._predict(feats, previous)

    def _predict(self, feats: PeriodFeatures, period: int) -> NodePrediction:
        if self.classifier is None:
            raise HedgeError("ML-NA: predict before fit (train or load a model first)")
        rows = feats.present[period]
        proba = self.classifier.predict_proba(feats.features[period, rows])[:, 1]
        return NodePrediction(nodes=feats.nodes[rows], proba=proba,
                              period_start=float(feats.period_start[period]))

    def save(self, path: str | Path) -> None:
        if self.classifier is None or self.classifier.booster_ is None:
            raise HedgeError("ML-NA: nothing to save (fit first)")
        booster = self.classifier.booster_.save_raw(raw_format="json").decode()
        doc = {"format": MODEL_FORMAT, "version": MODEL_VERSION,
               "params": asdict(self.params),
               "n_features": self.classifier.n_features_in_, "booster": booster}
        Path(path).write_text(json.dumps(doc))

    @classmethod
    def load(cls, path: str | Path) -> MLNA:
        path = Path(path)
        try:
            doc = json.loads(path.read_text())
        except OSError as exc:
            raise HedgeError(f"{path}: cannot read model ({exc.strerror or exc})") from exc
        except (ValueError, UnicodeDecodeError) as exc:
            raise HedgeError(f"{path}: not a hedge ML-NA model (not JSON: {exc})") from exc
        if not isinstance(doc, dict) or doc.get("format") != MODEL_FORMAT:
            raise HedgeError(f"{path}: field 'format' = "
                             f"{doc.get('format') if isinstance(doc, dict) else None!r}, "
                             f"expected {MODEL_FORMAT!r}")
        if doc.get("version") != MODEL_VERSION:
            raise HedgeError(f"{path}: field 'version' = {doc.get('version')!r}, expected "
                             f"{MODEL_VERSION} (retrain with this hedge version)")
        try:
            params = MLNAParams(**doc["params"])
            booster = xgb.Booster()
            booster.load_model(bytearray(doc["booster"].encode()))
            n_features = int(doc["n_features"])
        except (KeyError, TypeError, ValueError, xgb.core.XGBoostError) as exc:
            raise HedgeError(f"{path}: damaged ML-NA model ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''})") from exc
        if n_features != 3 * params.period_days:
            raise HedgeError(f"{path}: field 'n_features' = {n_features}, expected "
                             f"{3 * params.period_days} for period_days = {params.period_days}")
        clf = WeakNodeClassifier(eta=params.eta, max_depth=params.max_depth,
                                 n_estimators=params.n_estimators,
                                 random_state=params.random_state)
        clf.booster_, clf.n_features_in_ = booster, n_features
        return cls(params=params, classifier=clf)
