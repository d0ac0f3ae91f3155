"""The fast one-job path of the fresh estimators' NaN-median (issue 21) is np.nanmedian's
answer bit for bit: values, NaN signs and the sign of a zero median included."""

from __future__ import annotations

import warnings

import numpy as np

from hedge.estimate.runtime import _nanmedian_last


def test_one_axis_median_is_nanmedians_bit_for_bit():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        n = int(rng.integers(0, 30))
        v = rng.lognormal(0, 2, n) * rng.choice([-1, 1], n)
        if rng.random() < 0.2:
            v = np.round(v)  # ties, zeros of both signs
        v[rng.random(n) < 0.3] = np.nan
        v[rng.random(n) < 0.03] = np.inf
        v[rng.random(n) < 0.03] = -np.inf
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = np.nanmedian(v, axis=-1, keepdims=True)
        got = _nanmedian_last(v)
        assert got.shape == want.shape and got.tobytes() == want.tobytes(), v


def test_batches_keep_their_shape():
    v = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.array_equal(_nanmedian_last(v), [[2.0], [np.nan]], equal_nan=True)


def test_a_moot_zero_sign_still_gives_an_equal_median():
    v = np.array([0.0, -0.0, 0.0, -0.0, np.nan])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.nanmedian(v, axis=-1, keepdims=True)
    got = _nanmedian_last(v, zero_sign=False)
    assert got.shape == want.shape and got[0] == want[0] == 0.0
