"""Building ImKP's word count ahead of time (``make setup``): numba's code cache of the
kernels in :mod:`hedge.imkp.wordcount`, and the numba.pycc extension module that
:mod:`hedge.imkp.wordtable` loads so that a build need not import numba.

It lives apart from the kernels so that the kernels' module does not import the table that
loads them (the table reaches the kernels only through numba's jit, as a fallback).
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

import numba
from numba import types

from hedge.imkp import wordtable
from hedge.imkp.wordcount import _count_into, _counts, _rehash
from hedge.imkp.wordtable import WordCounter


def warm_cache(compile_ahead: bool = True) -> None:
    """Compile (or load from numba's cache) every kernel a build calls, with the argument
    types a build passes, then build the ahead-of-time module (``build_compiled``) unless
    ``compile_ahead`` is false: ``make setup`` runs it, so the first ``hedge imkp build``
    does not spend about 8 s of CPU compiling, nor later ones 0.4 s importing numba."""
    counter = WordCounter(compiled=wordtable.jit_kernels())
    counter.add(b"warm the cache")
    counter.grow()
    counter.take()
    if compile_ahead:
        build_compiled()


# The kernels' argument types as a build passes them (``WordCounter``): the AOT module has
# exactly these signatures, one each.
_BYTES = types.Array(types.uint8, 1, "C", readonly=True)
_SIGNATURES = {
    "count_into": types.Tuple((types.int64, types.int64))(
        _BYTES, types.int64, types.Array(types.bool_, 1, "C"), types.Array(types.int64, 2, "C"),
        types.Array(types.uint8, 1, "C"), types.Array(types.int32, 1, "C"),
        types.Array(types.uint32, 1, "C"), types.int64, types.uint64,
        types.Array(types.int64, 3, "C")),
    "rehash": types.void(types.Array(types.int64, 2, "C"), types.Array(types.int64, 2, "C")),
    "counts": types.Array(types.int64, 1, "C")(types.Array(types.int64, 2, "C"), types.int64),
}


class _GilFreeFlags(numba.core.compiler.Flags):
    """numba.pycc's compile flags, but the Python wrappers release the GIL while a kernel
    runs, as ``nogil=True`` does for the jit (builder threads count in parallel)."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        self.release_gil = True


def build_compiled(directory: Path | None = None) -> Path | None:
    """Compile the kernels ahead of time into an extension module that imports without
    numba (``hedge.imkp.wordtable``); its path, or None (with a warning) when it cannot be
    built here (numba.pycc needs a C compiler and Python's headers). The module is written
    under a temporary name and renamed, so a concurrent build never loads half a file."""
    from unittest import mock

    target = wordtable.compiled_path() if directory is None else \
        directory / wordtable.compiled_path().name
    if target.is_file():  # its name says what it was built from: nothing to do
        return target
    name = wordtable.compiled_name()
    kernels = {"count_into": _count_into, "rehash": _rehash, "counts": _counts}
    try:
        target.parent.mkdir(parents=True, exist_ok=True)  # may fail: a read-only install
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pycc is "pending deprecation" since numba 0.57
            import numba.pycc
            import numba.pycc.compiler as pycc_compiler

            with tempfile.TemporaryDirectory(dir=target.parent, prefix=".aot-") as work:
                cc = numba.pycc.CC(name)
                cc.output_dir = work
                cc.output_file = target.name
                cc.target_cpu = "host"  # like the jit: this machine's instructions
                for symbol, kernel in kernels.items():
                    cc.export(symbol, _SIGNATURES[symbol])(kernel.py_func)
                with mock.patch.object(pycc_compiler, "Flags", _GilFreeFlags):
                    cc.compile()
                os.replace(Path(work) / target.name, target)
        for stale in target.parent.glob(wordtable.COMPILED_PREFIX + "*"):
            if stale != target:  # built from an older source: never loaded again
                stale.unlink(missing_ok=True)
    except Exception as exc:  # noqa: BLE001 - the jit path still works; say why, go on
        warnings.warn(f"ImKP word count: no ahead-of-time module ({type(exc).__name__}: "
                      f"{exc}); builds import numba instead (about 0.4 s of CPU each)",
                      stacklevel=2)
        return None
    return target
