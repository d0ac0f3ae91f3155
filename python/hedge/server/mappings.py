"""ImKP mappings served to map tasks by the control plane (``[imkp] mappings = DIR``).

A map task whose job sets ``hedge.imkp.mapping.fetch=NAME`` (and no ``hedge.imkp.mapping``)
asks ``hedge serve`` for the mapping once, when its partitioner is configured, over the
authenticated Py4J channel (``ControlPlane.mapping``). The server answers only with files of
one directory the operator named:

- NAME is a plain file name: no ``/`` or ``\\``, no ``..``, no control characters, at most
  255 bytes, ending in ``.imkp`` (so no request can reach outside the directory);
- the file is read and validated with the same reader ``hedge imkp show`` uses
  (:func:`hedge.imkp.mapfile.decode`: magic, version, checksum, table bounds), so a corrupt
  file is refused at the server with the reader's reason and never reaches a task;
- files above :data:`MAX_BYTES` are refused (Py4J base64-encodes the answer in memory).

A validated file is kept in memory keyed by its (size, mtime): the many map tasks of a job
cost one read and one validation, and a rebuilt file (``hedge imkp build`` renames a new one
into place) is picked up at the next request.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from hedge.errors import HedgeError
from hedge.imkp.mapfile import decode

SUFFIX = ".imkp"
MAX_NAME_BYTES = 255
MAX_BYTES = 64 << 20


def check_directory(directory: str, where: str = "[imkp] mappings") -> Path:
    """The mappings directory, resolved; HedgeError when it is not a readable directory."""
    path = Path(directory).expanduser()
    if not path.is_dir():
        raise HedgeError(f"{where} = {directory}: not a directory (expected the folder the "
                         "control plane serves ImKP mapping files from, or empty for off)")
    if not os.access(path, os.R_OK | os.X_OK):
        raise HedgeError(f"{where} = {directory}: directory not readable by the control plane "
                         f"(user {os.getuid()})")
    return path.resolve()


def check_name(name: str) -> None:
    """HedgeError unless ``name`` is a plain ``*.imkp`` file name (see the module docstring)."""
    if not name or "/" in name or "\\" in name or ".." in name:
        raise HedgeError(f"mapping name {name!r} refused: expected a plain file name such as "
                         "'job.imkp' (no '/', '\\' or '..')")
    if any(ord(c) < 32 or ord(c) == 127 for c in name) or \
            len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise HedgeError(f"mapping name {name!r} refused: control characters or longer than "
                         f"{MAX_NAME_BYTES} bytes")
    if not name.endswith(SUFFIX) or name == SUFFIX or name.startswith("."):
        raise HedgeError(f"mapping name {name!r} refused: expected a file name ending in "
                         f"'{SUFFIX}' (not hidden), as written by 'hedge imkp build -o NAME.imkp'")


class MappingDirectory:
    """Validated mapping files of one directory, by plain file name."""

    def __init__(self, directory: str) -> None:
        self.directory = check_directory(directory)
        self._cache: dict[str, tuple[tuple[int, int], bytes]] = {}
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        """The ``*.imkp`` files the directory holds now (for ``hedge serve --check``)."""
        return sorted(p.name for p in self.directory.glob(f"*{SUFFIX}")
                      if p.is_file() and not p.name.startswith("."))

    def fetch(self, name: str) -> bytes:
        """The bytes of mapping ``name``, validated; HedgeError saying why it is refused."""
        check_name(name)
        path = self.directory / name
        try:
            stat = path.stat()
        except OSError:
            raise HedgeError(f"mapping {name!r} not found in the control plane's mappings "
                             f"directory {self.directory}; build it there with 'hedge imkp "
                             f"build INPUT... --reducers R -o {path}'") from None
        if not path.is_file():
            raise HedgeError(f"mapping {name!r}: {path} is not a regular file")
        if stat.st_size > MAX_BYTES:
            raise HedgeError(f"mapping {name!r}: {stat.st_size} bytes is above the "
                             f"{MAX_BYTES >> 20} MiB a control plane serves; ship the file "
                             "with -files and set hedge.imkp.mapping instead")
        key = (stat.st_size, stat.st_mtime_ns)
        with self._lock:
            cached = self._cache.get(name)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise HedgeError(f"mapping {name!r}: cannot read {path}: "
                             f"{exc.strerror or exc}") from None
        decode(data, f"{path} (served as {name!r})")  # HedgeError with the reader's reason
        with self._lock:
            self._cache[name] = (key, data)
        return data
