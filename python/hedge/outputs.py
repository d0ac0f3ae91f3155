"""Where a command's results go: checked before the work that makes them (a run may take
hours; a path it cannot write must not lose them at the end), and written whole or not at
all (a reader, a NodeManager's health script or a user's script reading ``--json``, never
sees half a file, and a failed write leaves the old one)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from hedge.errors import HedgeError


def check_output(path: str | Path, option: str, directory: bool) -> None:
    """HedgeError naming ``option`` unless ``path`` can be written: a file (``directory``
    False) whose folder exists or can be made, or a folder that exists or can be made.

    A missing folder is made to prove it can be (only the file system can say: ``/proc``
    refuses a new entry that a permission check would allow) and removed again at once,
    so a run that fails after the check leaves no empty folder behind; the write makes
    it for good."""
    path = Path(path)
    folder = path if directory else path.parent
    if directory and path.exists() and not path.is_dir():
        raise HedgeError(f"{option} {path}: not a directory, expected a folder for the output")
    if not directory and path.is_dir():
        raise HedgeError(f"{option} {path}: a directory, expected the path of a file")
    missing = [p for p in (folder, *folder.parents) if not p.exists()]  # deepest first
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HedgeError(f"{option} {path}: cannot create {folder} "
                         f"({exc.strerror or exc})") from None
    writable = os.access(folder, os.W_OK | os.X_OK)
    for made in missing:
        with contextlib.suppress(OSError):  # another process wrote there meanwhile: keep it
            made.rmdir()
    if not writable:
        raise HedgeError(f"{option} {path}: {folder} is not writable")


def write_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a synced temporary file renamed over it (making
    its folder); readable by everyone, as reports and blacklists are meant to be."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
