#!/usr/bin/env python3
"""Fetch the real Hadoop jars hedge compiles and tests against, into a cache outside the repo.

The pyspark source distributions on PyPI carry real Hadoop jars:
  pyspark==2.4.8  -> Hadoop 2.7.3, unshaded (incl. hadoop-mapreduce-client-app: Speculator,
                     TaskRuntimeEstimator, MRAppMaster) plus its third-party dependencies;
  pyspark==4.0.1  -> hadoop-client-api/runtime 3.4.1 (shaded client: enough for a MapReduce
                     job in the LocalJobRunner).
Each jar listed in scripts/hadoop-jars.sha256 is extracted and verified. A set is written to
a temporary directory and renamed into place only when every jar verified, so a cache entry
either is complete or does not exist. Running again with a complete cache does nothing.

Cache: $HEDGE_CACHE (default ~/.cache/hedge)/hadoop/<version>/. The sdists stay in
$HEDGE_CACHE/downloads/ (pip may install pyspark from there; delete them to save space).
Stdlib only; needs `pip` (with setuptools and wheel) in the running Python for the download.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "hadoop-jars.sha256"
SOURCES = {  # jar set -> (pyspark version, sha256 of its sdist)
    "hadoop-2.7.3": ("2.4.8", "3a19b71b8dc8dd91ebc943604a05e1ab01bce052456d42937035632d852d78dc"),
    "hadoop-3.4.1": ("4.0.1", "9d1f22d994f60369228397e3479003ffe2dd736ba79165003246ff7bd48e2c73"),
}
COMPLETE = ".complete"


class FetchError(Exception):
    pass


def cache_root() -> Path:
    return Path(os.environ.get("HEDGE_CACHE", Path.home() / ".cache" / "hedge"))


def read_manifest() -> dict[str, dict[str, str]]:
    sets: dict[str, dict[str, str]] = {}
    for number, line in enumerate(MANIFEST.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            digest, name = line.split()
            jar_set, jar = name.split("/")
        except ValueError:
            raise FetchError(f"{MANIFEST}:{number}: expected '<sha256>  <set>/<jar>'") from None
        sets.setdefault(jar_set, {})[jar] = digest
    return sets


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_complete(target: Path, jars: dict[str, str]) -> bool:
    """Complete = marker present and every jar there (checksums were verified on write)."""
    return (target / COMPLETE).is_file() and all((target / jar).is_file() for jar in jars)


def download_sdist(version: str, expected: str, downloads: Path) -> Path:
    sdist = downloads / f"pyspark-{version}.tar.gz"
    if sdist.is_file() and sha256(sdist) == expected:
        return sdist
    downloads.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f"pyspark-{version}-", dir=downloads))
    print(f"fetch: downloading pyspark=={version} source distribution from PyPI ...", flush=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--no-build-isolation", "--quiet", "-d", str(partial), f"pyspark=={version}"]
    result = subprocess.run(command, capture_output=True, text=True)
    fetched = partial / sdist.name
    if result.returncode != 0 or not fetched.is_file():
        shutil.rmtree(partial, ignore_errors=True)
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise FetchError(f"download of pyspark=={version} failed ({' | '.join(tail)}); check "
                         "that PyPI is reachable, then rerun the same command")
    if sha256(fetched) != expected:
        shutil.rmtree(partial, ignore_errors=True)
        raise FetchError(f"{sdist.name}: checksum mismatch (corrupted download?); nothing was "
                         "cached, rerun the same command to retry")
    fetched.replace(sdist)
    shutil.rmtree(partial, ignore_errors=True)
    return sdist


def extract_set(sdist: Path, jars: dict[str, str], target: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        with tarfile.open(sdist) as archive:
            for member in archive:
                name = member.name.rsplit("/", 1)[-1]
                if "/deps/jars/" in member.name and name in jars:
                    with archive.extractfile(member) as src, (staging / name).open("wb") as dst:
                        shutil.copyfileobj(src, dst)
        for jar, digest in jars.items():
            path = staging / jar
            if not path.is_file():
                raise FetchError(f"{sdist.name}: does not contain {jar}; the manifest "
                                 f"{MANIFEST.name} and the sdist disagree")
            if sha256(path) != digest:
                raise FetchError(f"{jar} from {sdist.name}: checksum mismatch; delete "
                                 f"{sdist} and rerun to download it again")
        (staging / COMPLETE).write_text("verified against scripts/hadoop-jars.sha256\n")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def fetch(only: list[str] | None = None) -> dict[str, Path]:
    root = cache_root()
    result = {}
    for jar_set, jars in read_manifest().items():
        if only and jar_set not in only:
            continue
        target = root / "hadoop" / jar_set.removeprefix("hadoop-")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not is_complete(target, jars):
            version, digest = SOURCES[jar_set]
            sdist = download_sdist(version, digest, root / "downloads")
            extract_set(sdist, jars, target)
            print(f"fetch: {jar_set}: {len(jars)} jars verified into {target}", flush=True)
        result[jar_set] = target
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", help="jar sets to fetch (default: all)")
    parser.add_argument("--print-dir", action="store_true", help="print each set's directory")
    args = parser.parse_args()
    try:
        for jar_set, path in fetch(args.sets).items():
            if args.print_dir:
                print(f"{jar_set}={path}")
    except FetchError as exc:
        print(f"fetch_hadoop_jars: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
