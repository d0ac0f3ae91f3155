"""Performance and energy model of a speculative copy C_i of straggler S_i on slot V_j.

A copy's run time is t = t_req + t_cont + t_data (request, contention, data transfer). The
first two are learned from the latest non-straggling task T_h that ran on the slot's node;
only the data term changes with locality (D: input bytes, B: network bandwidth):

- same locality as T_h:               t_Ci = t_Th
- C_i local, T_h was remote:          t_Ci = t_Th - D_Th / B   (T_h paid a transfer C_i won't)
- T_h was local, C_i remote:          t_Ci = t_Th + D_Ci / B   (C_i pays a transfer T_h didn't)

Time saved by the copy (S_i started at t_Vk and runs t_Si in all; C_i starts at t_Vj):

    Δt_ij = (t_Si + t_Vk) - (t_Ci + t_Vj)

Energy saved (P_k, P_j: slot powers of S_i's and C_i's slots, see
:meth:`hedge.analysis.energy.PowerModel.slot_power`):

    ΔE_ij = P_k * Δt_ij - P_j * t_Ci

All functions broadcast over numpy arrays, so a whole stragglers x slots matrix is one call.
"""

from __future__ import annotations

import numpy as np

from hedge.errors import HedgeError

Array = np.ndarray


def check_bandwidth(bandwidth: float) -> float:
    """Reject a bandwidth that is not a positive finite number of bytes/s."""
    b = float(bandwidth)
    if not np.isfinite(b) or b <= 0:
        raise HedgeError(f"bandwidth = {bandwidth!r} bytes/s, expected a finite value > 0")
    return b


def copy_runtime(
    last_runtime: Array | float,
    last_input_bytes: Array | float,
    last_local: Array | bool,
    copy_input_bytes: Array | float,
    copy_local: Array | bool,
    bandwidth: float,
) -> Array:
    """t_Ci from the latest non-straggling task T_h on the slot (see the module docstring).

    Unknown input sizes (NaN) contribute no locality adjustment. The result is floored at
    0 (a transfer estimate cannot make a run time negative).
    """
    b = check_bandwidth(bandwidth)
    t_th = np.asarray(last_runtime, dtype=np.float64)
    th_local = np.asarray(last_local, dtype=bool)
    c_local = np.asarray(copy_local, dtype=bool)
    saved = np.nan_to_num(np.asarray(last_input_bytes, dtype=np.float64) / b)
    paid = np.nan_to_num(np.asarray(copy_input_bytes, dtype=np.float64) / b)
    adjust = np.where(c_local & ~th_local, -saved, 0.0) + np.where(~c_local & th_local, paid, 0.0)
    return np.maximum(t_th + adjust, 0.0)


def time_saved(
    straggler_runtime: Array | float,
    straggler_start: Array | float,
    copy_runtime: Array | float,
    copy_start: Array | float,
) -> Array:
    """``Δt = (t_Si + t_Vk) - (t_Ci + t_Vj)``: the straggler's end minus the copy's end."""
    return (np.asarray(straggler_runtime) + np.asarray(straggler_start)) - (
        np.asarray(copy_runtime) + np.asarray(copy_start)
    )


def energy_saved(
    straggler_power: Array | float,
    copy_power: Array | float,
    dt: Array | float,
    copy_runtime: Array | float,
) -> Array:
    """``ΔE = P_k * Δt - P_j * t_Ci``: the straggler's energy no longer spent minus the copy's."""
    return np.asarray(straggler_power) * np.asarray(dt) - np.asarray(copy_power) * np.asarray(
        copy_runtime
    )
