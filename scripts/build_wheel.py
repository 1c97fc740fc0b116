#!/usr/bin/env python3
"""Builds callproof's platform wheels (``make wheel``) with the standard library only.

Each wheel holds the static ``callproof`` binary for one platform, cross-compiled
with ``CGO_ENABLED=0 GOOS=… GOARCH=…``, in ``callproof-V.data/scripts/`` (pip
installs it beside the environment's console scripts, so it is on the PATH),
and the small Python package python/callproof (``python -m callproof``, and
the pytest plugin ``callproof.pytest_plugin``, declared as a ``pytest11``
entry point).

Version: the ``Version`` constant of cmd/callproof/version.go, mapped to
PEP 440 by :func:`pep440` (docs/CLI.md, "Version").

Platform tags (docs/CLI.md, "Python wheels"): a static Go binary needs no C
library, so one Linux wheel per architecture carries both the manylinux and
the musllinux tag: manylinux_2_17 is older than any supported glibc and the
first manylinux tag for aarch64 (manylinux2014, its alias, is for pip before
20.3), musllinux_1_1 the first musl tag; Go itself needs only Linux 3.2.
macOS: Go 1.25 and later run on macOS 12 or newer, hence macosx_12_0.

    scripts/build_wheel.py [--out DIR] [--platform NAME]...   (default: dist, all)
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION_GO = ROOT / "cmd" / "callproof" / "version.go"
PACKAGE = ROOT / "python" / "callproof"
DESCRIPTION = ROOT / "python" / "README.md"
NAME = "callproof"
# pytest loads the plugin of every installed distribution that declares one.
ENTRY_POINTS = "[pytest11]\ncallproof = callproof.pytest_plugin\n"


@dataclass(frozen=True)
class Platform:
    goos: str
    goarch: str
    tags: tuple[str, ...]  # platform tags, joined with "." in the file name

    @property
    def tag(self) -> str:
        return ".".join(self.tags)


PLATFORMS: dict[str, Platform] = {
    "linux-amd64": Platform("linux", "amd64", ("manylinux_2_17_x86_64", "manylinux2014_x86_64", "musllinux_1_1_x86_64")),
    "linux-arm64": Platform("linux", "arm64", ("manylinux_2_17_aarch64", "manylinux2014_aarch64", "musllinux_1_1_aarch64")),
    "darwin-arm64": Platform("darwin", "arm64", ("macosx_12_0_arm64",)),
}

_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-(alpha|beta|rc|dev)\.(\d+))?$")
_PRE = {"alpha": "a", "beta": "b", "rc": "rc", "dev": ".dev"}
# Zip entries carry this fixed time, so the same sources give the same wheel.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def pep440(semver: str) -> str:
    """Maps the Go version (MAJOR.MINOR.PATCH[-alpha|beta|rc|dev.N]) to PEP 440."""
    m = _SEMVER.match(semver)
    if not m:
        raise ValueError(f"version {semver!r} is not MAJOR.MINOR.PATCH with an optional -alpha.N, -beta.N, -rc.N or -dev.N")
    major, minor, patch, pre, n = m.groups()
    base = f"{int(major)}.{int(minor)}.{int(patch)}"
    return base if pre is None else f"{base}{_PRE[pre]}{int(n)}"


def go_version() -> str:
    """The Version constant of cmd/callproof/version.go."""
    m = re.search(r'(?m)^const Version = "([^"]*)"$', VERSION_GO.read_text())
    if not m:
        raise SystemExit(f"build_wheel: no `const Version = \"…\"` line in {VERSION_GO}")
    return m.group(1)


def build_binary(plat: Platform, out: Path) -> None:
    env = dict(os.environ, GOOS=plat.goos, GOARCH=plat.goarch, CGO_ENABLED="0")
    go = os.environ.get("GO", "go")
    subprocess.run([go, "build", "-trimpath", "-ldflags=-s -w", "-o", str(out), "./cmd/callproof"], cwd=ROOT, env=env, check=True)


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def metadata_text(version: str) -> str:
    head = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {version}",
        "Summary: Tests voice agents by what happened on the call (tool calls, backend state), not the transcript",
        "Home-page: https://github.com/callproof/callproof",
        "Project-URL: Source, https://github.com/callproof/callproof",
        "Requires-Python: >=3.9",
        "Classifier: Programming Language :: Go",
        "Classifier: Topic :: Software Development :: Testing",
        "Classifier: Typing :: Typed",
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(head) + "\n\n" + DESCRIPTION.read_text()


def wheel_text(plat: Platform) -> str:
    lines = ["Wheel-Version: 1.0", "Generator: callproof scripts/build_wheel.py", "Root-Is-Purelib: false"]
    lines += [f"Tag: py3-none-{t}" for t in plat.tags]
    return "\n".join(lines) + "\n"


def wheel_name(version: str, plat: Platform) -> str:
    return f"{NAME}-{version}-py3-none-{plat.tag}.whl"


def write_wheel(path: Path, version: str, plat: Platform, binary: bytes) -> None:
    data_dir, info_dir = f"{NAME}-{version}.data", f"{NAME}-{version}.dist-info"
    files: list[tuple[str, bytes, int]] = []
    for src in sorted(PACKAGE.iterdir()):
        if src.is_file() and (src.suffix in (".py", ".typed")):
            files.append((f"{NAME}/{src.name}", src.read_bytes(), 0o644))
    files.append((f"{data_dir}/scripts/{NAME}", binary, 0o755))
    files.append((f"{info_dir}/METADATA", metadata_text(version).encode(), 0o644))
    files.append((f"{info_dir}/WHEEL", wheel_text(plat).encode(), 0o644))
    files.append((f"{info_dir}/entry_points.txt", ENTRY_POINTS.encode(), 0o644))
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data, _ in files)
    files.append((f"{info_dir}/RECORD", (record + f"{info_dir}/RECORD,,\n").encode(), 0o644))

    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.external_attr = (0o100000 | mode) << 16  # a regular file; pip keeps the executable bit
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    tmp.replace(path)


def build(out: Path, names: list[str]) -> list[Path]:
    """Builds the wheels of the named platforms into out; returns their paths."""
    version = pep440(go_version())
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        bins = {name: Path(tmp) / name / NAME for name in names}
        for b in bins.values():
            b.parent.mkdir()
        # The cross-compiles are independent; the linker is mostly serial.
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as pool:
            for f in [pool.submit(build_binary, PLATFORMS[n], bins[n]) for n in names]:
                f.result()
        paths = []
        for name in names:
            plat = PLATFORMS[name]
            path = out / wheel_name(version, plat)
            write_wheel(path, version, plat, bins[name].read_bytes())
            paths.append(path)
    return paths


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="build_wheel.py", description="Builds callproof's platform wheels.")
    p.add_argument("--out", type=Path, default=ROOT / "dist", help="directory for the wheels (default: dist)")
    p.add_argument("--platform", action="append", choices=sorted(PLATFORMS), help="build only these (repeatable; default: all)")
    args = p.parse_args(argv)
    try:
        paths = build(args.out, args.platform or list(PLATFORMS))
    except subprocess.CalledProcessError as e:
        print(f"build_wheel: {' '.join(e.cmd)}: exit {e.returncode}", file=sys.stderr)
        return 1
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
