"""Package exports imported on first use (PEP 562), so a package stays light to import.

``import hedge.sim.cli`` runs ``hedge/sim/__init__.py`` first; were that to import the
engine, every ``hedge simulate --help`` would pay for numba, pyarrow and scipy (a second of
start-up) to print text. A package lists what it re-exports and from where; each name is
imported when first read (``from hedge.sim import simulate`` works as before).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_exports(package: str, exports: dict[str, str]
                 ) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package``, whose ``exports`` map
    each name to the module it comes from."""

    def __getattr__(name: str) -> object:  # noqa: N807 - the module hook's own name
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name]), name)

    def __dir__() -> list[str]:  # noqa: N807
        return sorted(set(exports) | set(vars(sys.modules[package])))

    return __getattr__, __dir__, sorted(exports)
