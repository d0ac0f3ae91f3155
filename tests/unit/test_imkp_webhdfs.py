"""HDFS inputs over WebHDFS, against a tiny local HTTP server speaking the calls hedge uses.

The server answers GETFILESTATUS, LISTSTATUS and OPEN (the NameNode's OPEN answers 307 to a
"DataNode" URL on the same server, as a real cluster does); nothing else is implemented.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from hedge.errors import HedgeError
from hedge.imkp.build import BuildSettings, build, build_to_file
from hedge.imkp.mapfile import encode
from tests.integration.test_imkp_wordcount import zipf_text

FILES = {
    "/data/in/part-0.txt": zipf_text(8000, 1.1, seed=2).encode(),
    "/data/in/part-1.txt": zipf_text(8000, 1.1, seed=3).encode(),
    "/data/in/_SUCCESS": b"",
}


class WebHdfs(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep pytest output clean
        return

    def reply(self, code: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def not_found(self, path: str) -> None:
        error = {"RemoteException": {"exception": "FileNotFoundException",
                                     "javaClassName": "java.io.FileNotFoundException",
                                     "message": f"File does not exist: {path}"}}
        self.reply(404, json.dumps(error).encode())

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        url = urlsplit(self.path)
        if url.path.startswith("/datanode/"):
            self.reply(200, FILES[unquote(url.path[len("/datanode"):])], "application/octet-stream")
            return
        path = unquote(url.path[len("/webhdfs/v1"):]).rstrip("/") or "/"
        op = parse_qs(url.query)["op"][0]
        children = {p[len(path):].lstrip("/").split("/")[0] for p in FILES
                    if p.startswith(path.rstrip("/") + "/")}
        if op == "GETFILESTATUS":
            if path in FILES:
                status = {"type": "FILE", "length": len(FILES[path]), "pathSuffix": ""}
            elif children:
                status = {"type": "DIRECTORY", "length": 0, "pathSuffix": ""}
            else:
                return self.not_found(path)
            self.reply(200, json.dumps({"FileStatus": status}).encode())
        elif op == "LISTSTATUS":
            entries = []
            for name in sorted(children):
                full = f"{path.rstrip('/')}/{name}"
                kind = "FILE" if full in FILES else "DIRECTORY"
                entries.append({"pathSuffix": name, "type": kind, "length": len(FILES.get(full, b""))})
            self.reply(200, json.dumps({"FileStatuses": {"FileStatus": entries}}).encode())
        elif op == "OPEN":
            if path not in FILES:
                return self.not_found(path)
            self.send_response(307)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_port}/datanode{path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.reply(400, b"{}")


@pytest.fixture(scope="module")
def namenode() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), WebHdfs)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_port
    server.shutdown()


@pytest.fixture(scope="module")
def local_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("local")
    for path, data in FILES.items():
        (folder / Path(path).name).write_bytes(data)
    return folder


def test_webhdfs_folder_file_and_glob_match_the_local_build(namenode: int, local_copy: Path) -> None:
    settings = BuildSettings(reducers=3, scale=5)
    local = encode(build([str(local_copy)], settings))
    assert encode(build([f"webhdfs://127.0.0.1:{namenode}/data/in"], settings)) == local
    assert encode(build([f"webhdfs://127.0.0.1:{namenode}/data/in/part-*.txt"], settings)) == local
    both = [f"webhdfs://127.0.0.1:{namenode}/data/in/part-0.txt",
            f"webhdfs://127.0.0.1:{namenode}/data/in/part-1.txt"]
    assert encode(build(both, settings)) == local


def test_hdfs_url_uses_the_given_webhdfs_endpoint(namenode: int, local_copy: Path) -> None:
    settings = BuildSettings(reducers=2, webhdfs_url=f"http://127.0.0.1:{namenode}")
    assert encode(build(["hdfs://namenode:8020/data/in"], settings)) == \
        encode(build([str(local_copy)], BuildSettings(reducers=2)))


def test_unreadable_hdfs_paths_are_one_clear_error(namenode: int, tmp_path: Path) -> None:
    with pytest.raises(HedgeError, match="no such file or folder on HDFS"):
        build_to_file([f"webhdfs://127.0.0.1:{namenode}/data/missing"], BuildSettings(reducers=2),
                      tmp_path / "m.imkp")
    with pytest.raises(HedgeError, match="unreachable"):
        build_to_file(["hdfs://127.0.0.1:1/data/in"],
                      BuildSettings(reducers=2, webhdfs_url="http://127.0.0.1:1"),
                      tmp_path / "m.imkp")
    assert list(tmp_path.iterdir()) == []
