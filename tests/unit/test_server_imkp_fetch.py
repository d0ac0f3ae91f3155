"""ImKP mappings served by the control plane (``[imkp] mappings``, ``ControlPlane.mapping``).

One test calls the started service over Py4J's own socket protocol, sending what the shim's
Java proxy sends (the Java end itself runs in tests/integration/test_imkp_fetch.py).
"""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pytest

from hedge.cli import main
from hedge.errors import HedgeError
from hedge.imkp.mapfile import Mapping, decode, write_mapping
from hedge.server.mappings import MappingDirectory, check_name
from hedge.server.service import ControlPlaneService, EntryPoint, ServerConfig
from hedge.server.settings import check_config, load_settings

TOKEN = "0123456789abcdef-test-token"


def small_mapping(reducers: int = 3) -> Mapping:
    """3 reducers, 6 groups, one heavy key: loads [5+7, 2+4, 9+1] = [12, 6, 10] + heavy 20."""
    return Mapping(reducers=reducers, scale=2,
                   group_reducer=np.array([0, 1, 2, 0, 1, 2]),
                   group_count=np.array([5, 2, 9, 7, 4, 1]),
                   heavy_keys=[b"the"], heavy_reducer=np.array([1]),
                   heavy_count=np.array([20]), heaviest_key_count=20)


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "mappings"
    d.mkdir()
    write_mapping(small_mapping(), d / "job.imkp")
    return d


def service_with(folder: Path | None) -> ControlPlaneService:
    return ControlPlaneService(ServerConfig(port=0, token=TOKEN, policy="static",
                                            imkp_mappings=str(folder) if folder else ""))


def test_serves_the_file_by_name_byte_for_byte(folder: Path) -> None:
    served = EntryPoint(service_with(folder)).mapping("job.imkp")
    assert served == (folder / "job.imkp").read_bytes()
    mapping = decode(served)
    assert mapping.loads.tolist() == [12, 26, 10]
    assert mapping.reducer_of("the") == 1


@pytest.mark.parametrize(("name", "message"), [
    ("../job.imkp", "expected a plain file name"),
    ("sub/job.imkp", "expected a plain file name"),
    ("/etc/passwd", "expected a plain file name"),
    ("..\\job.imkp", "expected a plain file name"),
    ("", "expected a plain file name"),
    ("job.txt", "expected a file name ending in '.imkp'"),
    (".imkp", "expected a file name ending in '.imkp'"),
    (".hidden.imkp", "(not hidden)"),
    ("job\n.imkp", "control characters"),
    ("a" * 300 + ".imkp", "longer than 255 bytes"),
])
def test_names_that_are_not_plain_imkp_file_names_are_refused(folder: Path, name: str,
                                                               message: str) -> None:
    answer = EntryPoint(service_with(folder)).mapping(name)
    assert answer.startswith(b"ERROR mapping name ")
    assert message in answer.decode()
    with pytest.raises(HedgeError, match="refused"):
        check_name(name)


def test_a_name_reaching_outside_is_refused_even_when_the_file_exists(tmp_path: Path,
                                                                      folder: Path) -> None:
    write_mapping(small_mapping(), tmp_path / "outside.imkp")
    answer = EntryPoint(service_with(folder)).mapping("../outside.imkp").decode()
    assert answer.startswith("ERROR") and "plain file name" in answer


def test_missing_file_names_the_directory_and_the_build_command(folder: Path) -> None:
    answer = EntryPoint(service_with(folder)).mapping("other.imkp").decode()
    assert answer == (f"ERROR mapping 'other.imkp' not found in the control plane's mappings "
                      f"directory {folder.resolve()}; build it there with 'hedge imkp build "
                      f"INPUT... --reducers R -o {folder.resolve() / 'other.imkp'}'")


def test_corrupt_file_is_refused_with_the_readers_reason(folder: Path) -> None:
    data = bytearray((folder / "job.imkp").read_bytes())
    data[70] ^= 0xFF
    (folder / "bad.imkp").write_bytes(bytes(data))
    (folder / "short.imkp").write_bytes(bytes(data[:40]))
    (folder / "text.imkp").write_text("not a mapping\n")
    entry = EntryPoint(service_with(folder))
    assert entry.mapping("bad.imkp").decode().endswith(
        "(served as 'bad.imkp'): ImKP mapping file corrupted (checksum mismatch); rebuild it "
        "with 'hedge imkp build'")
    assert "truncated ImKP mapping file (40 bytes" in entry.mapping("short.imkp").decode()
    assert "not an ImKP mapping file" in entry.mapping("text.imkp").decode()


def test_a_directory_named_like_a_mapping_is_refused(folder: Path) -> None:
    (folder / "dir.imkp").mkdir()
    answer = EntryPoint(service_with(folder)).mapping("dir.imkp").decode()
    assert answer.startswith("ERROR") and "is not a regular file" in answer


def test_feature_off_says_which_setting_turns_it_on() -> None:
    answer = EntryPoint(service_with(None)).mapping("job.imkp").decode()
    assert answer.startswith("ERROR this control plane serves no ImKP mappings ([imkp] "
                             "mappings is not set")
    assert "hedge.imkp.mapping" in answer


def test_a_rebuilt_file_is_served_new_and_a_corrupted_one_is_refused(folder: Path) -> None:
    served = MappingDirectory(str(folder))
    first = served.fetch("job.imkp")
    write_mapping(small_mapping(reducers=4), folder / "job.imkp")
    assert decode(served.fetch("job.imkp")).reducers == 4
    (folder / "job.imkp").write_bytes(first[:-3])  # same name, now truncated
    with pytest.raises(HedgeError, match="truncated"):
        served.fetch("job.imkp")


def test_settings_section_check_and_command_line(tmp_path: Path, folder: Path,
                                                 capsys) -> None:
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    ini = tmp_path / "hedge.ini"
    ini.write_text(f"[server]\ntoken_file = {token}\npolicy = static\n"
                   f"[imkp]\nmappings = {folder}\n")
    config, _ = load_settings(ini)
    assert config.imkp_mappings == str(folder)
    assert main(["serve", "--config", str(ini), "--check"]) == 0
    out = capsys.readouterr().out
    assert f"imkp mappings: {folder.resolve()} (1 mapping file(s): job.imkp)" in out

    ini.write_text(f"[server]\ntoken_file = {token}\n[imkp]\nmappings = {tmp_path / 'no'}\n")
    assert main(["serve", "--config", str(ini), "--check"]) == 2
    assert f"[imkp] mappings = {tmp_path / 'no'}: not a directory" in capsys.readouterr().err
    ini.write_text(f"[server]\ntoken_file = {token}\n[imkp]\nmapping = {folder}\n")
    assert main(["serve", "--config", str(ini), "--check"]) == 2
    assert "[imkp] unknown key(s) ['mapping'], expected ['mappings']" in capsys.readouterr().err

    ini.write_text(f"[server]\ntoken_file = {token}\npolicy = static\n")
    assert main(["serve", "--config", str(ini), "--check"]) == 0
    assert "imkp mappings: off" in capsys.readouterr().out
    assert main(["serve", "--config", str(ini), "--imkp-mappings", str(folder), "--check"]) == 0
    assert "(1 mapping file(s): job.imkp)" in capsys.readouterr().out
    with pytest.raises(HedgeError, match="not a directory"):
        check_config(ServerConfig(policy="static", imkp_mappings=str(tmp_path / "no")))
    with pytest.raises(HedgeError, match="not a directory"):
        service_with(tmp_path / "no")


def py4j_call(port: int, token: str, name: str) -> bytes:
    """One ``mapping(name)`` call over Py4J's socket protocol, as the shim's Java proxy sends
    it: authenticate (``A``), then call the entry point ``t`` (``c``); decode the answer."""
    from py4j import protocol as proto

    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock, \
            sock.makefile("rb") as stream:
        sock.sendall(f"{proto.AUTH_COMMAND_NAME}\n{token}\n{proto.END}\n".encode())
        auth = stream.readline().decode()
        if auth != proto.OUTPUT_VOID_COMMAND:
            raise ConnectionRefusedError(f"authentication refused: {auth!r}")
        command = (f"{proto.CALL_PROXY_COMMAND_NAME}\n{proto.ENTRY_POINT_OBJECT_ID}\nmapping\n"
                   + proto.get_command_part(name) + proto.END_COMMAND_PART)
        sock.sendall(command.encode())
        answer = stream.readline().decode()[:-1]
    assert answer.startswith(proto.RETURN_MESSAGE + proto.SUCCESS + proto.BYTES_TYPE), answer
    return bytes(proto.get_return_value(answer[1:], None))  # the helper takes it without '!'



def test_real_py4j_endpoint_hands_the_bytes_and_the_refusals_over(folder: Path) -> None:
    svc = service_with(folder)
    svc.start()
    try:
        assert py4j_call(svc.port, TOKEN, "job.imkp") == (folder / "job.imkp").read_bytes()
        assert py4j_call(svc.port, TOKEN, "../x.imkp").startswith(
            b"ERROR mapping name '../x.imkp' refused")
        with pytest.raises((ConnectionRefusedError, ConnectionError, OSError)):
            py4j_call(svc.port, "wrong-token-0123456789", "job.imkp")
    finally:
        svc.stop()
