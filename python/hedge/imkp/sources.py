"""Build inputs: local files, folders and globs, and HDFS paths read over WebHDFS.

Folders are read the way Hadoop's ``FileInputFormat`` reads an input folder: the files
directly inside it, skipping names that start with ``_`` or ``.`` (``_SUCCESS``, ``.crc``).

HDFS: ``webhdfs://host:port/path`` talks to ``http://host:port``; ``hdfs://host[:port]/path``
talks to the NameNode's WebHDFS endpoint, which is ``--webhdfs-url`` (or
``$HEDGE_WEBHDFS_URL``) when given, else ``http://host:9870`` (Hadoop 3's default HTTP
port). Only the WebHDFS calls GETFILESTATUS, LISTSTATUS and OPEN are used, through the
``hdfs`` package's ``InsecureClient``.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

from hedge.errors import HedgeError

WEBHDFS_DEFAULT_PORT = 9870


@dataclass(frozen=True)
class Source:
    """One input file: a display name, its size, and how to open it as a binary stream."""

    name: str
    size: int
    open: Callable[[], AbstractContextManager[BinaryIO]]


def hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def expand_inputs(inputs: list[str], webhdfs_url: str | None = None) -> list[Source]:
    """Every file named by ``inputs`` (in order, folders and globs expanded, sorted)."""
    if not inputs:
        raise HedgeError("no input given: name at least one file, folder, glob or HDFS path")
    sources: list[Source] = []
    for item in inputs:
        scheme = urlsplit(item).scheme
        if scheme in ("hdfs", "webhdfs"):
            sources += _hdfs_sources(item, webhdfs_url)
        elif scheme in ("", "file"):
            sources += _local_sources(item[len("file://"):] if scheme == "file" else item)
        else:
            raise HedgeError(f"input '{item}': unsupported scheme '{scheme}://' (expected a "
                             "local path, file://, hdfs:// or webhdfs://)")
    return sources


def _local_sources(item: str) -> list[Source]:
    if glob.has_magic(item):
        paths = sorted(Path(p) for p in glob.glob(item))
        if not paths:
            raise HedgeError(f"input '{item}': the glob matches no file")
    else:
        paths = [Path(item)]
    out = []
    for path in paths:
        if path.is_dir():
            out += [_local(p) for p in sorted(path.iterdir()) if p.is_file() and not hidden(p.name)]
        elif path.is_file():
            out.append(_local(path))
        elif not path.exists():
            raise HedgeError(f"input '{path}': no such file or folder")
        else:
            raise HedgeError(f"input '{path}': not a regular file or folder")
    return out


def _local(path: Path) -> Source:
    if not os.access(path, os.R_OK):
        raise HedgeError(f"input '{path}': permission denied (cannot read it)")
    return Source(str(path), path.stat().st_size, lambda: open(path, "rb"))  # noqa: SIM115


def webhdfs_endpoint(url: str, webhdfs_url: str | None) -> tuple[str, str]:
    """(WebHDFS base URL, path) for an ``hdfs://`` or ``webhdfs://`` URL."""
    parts = urlsplit(url)
    if not parts.hostname:
        raise HedgeError(f"input '{url}': no host in the URL (expected "
                         f"{parts.scheme}://namenode:port/path)")
    if parts.scheme == "webhdfs":
        base = f"http://{parts.hostname}:{parts.port or WEBHDFS_DEFAULT_PORT}"
    else:
        base = webhdfs_url or os.environ.get("HEDGE_WEBHDFS_URL") or \
            f"http://{parts.hostname}:{WEBHDFS_DEFAULT_PORT}"
    return base, parts.path or "/"


def _hdfs_sources(url: str, webhdfs_url: str | None) -> list[Source]:
    from hdfs import InsecureClient  # imported on use: only HDFS inputs need it

    base, path = webhdfs_endpoint(url, webhdfs_url)
    client = InsecureClient(base, timeout=30)
    parts = urlsplit(url)
    prefix = f"{parts.scheme}://{parts.netloc}"  # children are named as full URLs
    # a glob may only be in the last path component (listing one folder per input)
    folder, pattern = (path.rsplit("/", 1) if glob.has_magic(path) else (path, None))
    status = _hdfs_call(url, base, lambda: client.status(folder or "/", strict=False))
    if status is None:
        raise HedgeError(f"input '{url}': no such file or folder on HDFS (asked WebHDFS at {base})")
    if status["type"] == "FILE" and pattern is None:
        return [_hdfs_file(client, url, path, status["length"], base)]
    listing = _hdfs_call(url, base, lambda: client.list(folder or "/", status=True))
    out = []
    for name, entry in sorted(listing):
        if entry["type"] != "FILE" or hidden(name) or (pattern and not fnmatch(name, pattern)):
            continue
        child = f"{folder.rstrip('/')}/{name}"
        out.append(_hdfs_file(client, prefix + child, child, entry["length"], base))
    if pattern and not out:
        raise HedgeError(f"input '{url}': the glob matches no file on HDFS")
    return out


def _hdfs_file(client, url: str, path: str, size: int, base: str) -> Source:  # noqa: ANN001
    @contextmanager
    def opener() -> Iterator[BinaryIO]:
        reader = _hdfs_call(url, base, lambda: client.read(path))
        with _hdfs_guard(url, base), reader as stream:
            yield stream

    return Source(url, int(size), opener)


def _hdfs_call(url: str, base: str, call: Callable):  # noqa: ANN202
    with _hdfs_guard(url, base):
        return call()


@contextmanager
def _hdfs_guard(url: str, base: str) -> Iterator[None]:
    """Turn WebHDFS / HTTP failures into one HedgeError naming the path and endpoint."""
    import requests
    from hdfs.util import HdfsError

    try:
        yield
    except HdfsError as exc:
        raise HedgeError(f"input '{url}': cannot read it over WebHDFS at {base}: {exc}") from exc
    except requests.RequestException as exc:
        raise HedgeError(f"input '{url}': WebHDFS at {base} unreachable ({type(exc).__name__}); "
                         "check the NameNode address or pass --webhdfs-url") from exc


def read_into(stream: BinaryIO, view: memoryview) -> int:
    """Fill ``view`` from the stream; bytes read (fewer only at end of stream)."""
    readinto = getattr(stream, "readinto", None)
    have = 0
    while have < len(view):
        if readinto is not None:
            got = readinto(view[have:])
        else:  # a stream without readinto (some network readers)
            chunk = stream.read(len(view) - have)
            got = len(chunk)
            view[have:have + got] = chunk
        if not got:
            break
        have += got
    return have
