"""The wheels `make wheel` builds (scripts/build_wheel.py) install and run.

The wheels are built once per session (conftest.py). This machine's wheel
is installed with pip, offline, into a fresh virtual environment, which runs
`callproof version`, `python -m callproof version` and `callproof demo`;
every wheel is checked by its tags, its RECORD and its binary's header.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Callable

import build_wheel as bw  # conftest.py loads scripts/build_wheel.py as this module
import pytest

ROOT = Path(__file__).resolve().parents[2]

# What each platform's binary must be: (ELF e_machine) or Mach-O cputype.
EM_X86_64, EM_AARCH64 = 62, 183
CPU_TYPE_ARM64 = 0x0100000C
MACHO_MAGIC_64 = 0xFEEDFACF


def test_pep440_mapping() -> None:
    cases = {
        "0.1.0": "0.1.0",
        "1.12.3": "1.12.3",
        "1.2.3-alpha.1": "1.2.3a1",
        "1.2.3-beta.0": "1.2.3b0",
        "1.2.3-rc.2": "1.2.3rc2",
        "1.2.3-dev.4": "1.2.3.dev4",
        "01.2.3": "1.2.3",
    }
    for semver, want in cases.items():
        assert bw.pep440(semver) == want, semver
    for bad in ("1.2", "v1.2.3", "1.2.3-rc1", "1.2.3-pre.1", "1.2.3+build.5", "1.2.3-rc.1.2"):
        with pytest.raises(ValueError):
            bw.pep440(bad)


def test_docs_state_the_mapping() -> None:
    """docs/CLI.md's table of version forms is what pep440 does."""
    doc = (ROOT / "docs" / "CLI.md").read_text()
    rows = re.findall(r"^\| `MAJOR\.MINOR\.PATCH(\S*)` \| `MAJOR\.MINOR\.PATCH(\S*)` \|", doc, re.M)
    assert len(rows) == 5, "one row per form: release, alpha, beta, rc, dev"
    for semver, pep in rows:
        assert bw.pep440("1.2.3" + semver.replace("N", "7")) == "1.2.3" + pep.replace("N", "7")
    for tag in {t for p in bw.PLATFORMS.values() for t in p.tags}:
        assert f"`{tag}`" in doc, f"docs/CLI.md names the platform tag {tag}"


def _verify_record(z: zipfile.ZipFile) -> dict[str, str]:
    names = z.namelist()
    (record,) = [n for n in names if n.endswith(".dist-info/RECORD")]
    rows = {}
    for line in z.read(record).decode().splitlines():
        path, digest, size = line.rsplit(",", 2)
        rows[path] = digest
        if path == record:
            assert digest == size == ""
            continue
        data = z.read(path)
        assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode(), path
        assert int(size) == len(data), path
    assert set(rows) == set(names), "RECORD lists exactly the wheel's files"
    return rows


def _elf_machine(data: bytes) -> tuple[int, bool]:
    """e_machine, and whether a program header asks for an interpreter (dynamic)."""
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "64-bit little-endian ELF"
    (e_machine,) = struct.unpack_from("<H", data, 18)
    (phoff,) = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    interp = any(struct.unpack_from("<I", data, phoff + i * phentsize)[0] == 3 for i in range(phnum))  # PT_INTERP
    return e_machine, interp


def test_every_wheel_has_its_tags_record_and_binary(wheels: dict[str, Path]) -> None:
    version = bw.pep440(bw.go_version())
    for name, path in wheels.items():
        plat = bw.PLATFORMS[name]
        assert path.name == f"callproof-{version}-py3-none-{'.'.join(plat.tags)}.whl"
        with zipfile.ZipFile(path) as z:
            _verify_record(z)
            info = f"callproof-{version}.dist-info/"
            tags = [line.split(": ", 1)[1] for line in z.read(info + "WHEEL").decode().splitlines() if line.startswith("Tag: ")]
            assert tags == [f"py3-none-{t}" for t in plat.tags]
            meta = z.read(info + "METADATA").decode()
            assert f"\nVersion: {version}\n" in meta
            assert "flite" in meta and "pocketsphinx" in meta, "the description says what audio wires need"
            assert {"callproof/__init__.py", "callproof/__main__.py", "callproof/py.typed", "callproof/pytest_plugin.py", "callproof/scores.py"} <= set(z.namelist())
            assert z.read(info + "entry_points.txt").decode() == "[pytest11]\ncallproof = callproof.pytest_plugin\n", "pytest finds the plugin"
            entry = z.getinfo(f"callproof-{version}.data/scripts/callproof")
            assert (entry.external_attr >> 16) & 0o777 == 0o755
            binary = z.read(entry)
        if plat.goos == "linux":
            machine, dynamic = _elf_machine(binary)
            assert machine == {"amd64": EM_X86_64, "arm64": EM_AARCH64}[plat.goarch], name
            assert not dynamic, f"{name}: the binary is static (no PT_INTERP)"
            assert all(t.startswith(("manylinux", "musllinux")) for t in plat.tags)
        else:
            magic, cputype = struct.unpack_from("<II", binary, 0)
            assert (magic, cputype) == (MACHO_MAGIC_64, CPU_TYPE_ARM64), name


def test_the_same_binary_gives_the_same_wheel(tmp_path: Path) -> None:
    plat = bw.PLATFORMS["linux-amd64"]
    a, b = tmp_path / "a.whl", tmp_path / "b.whl"
    bw.write_wheel(a, "1.2.3", plat, b"\x7fELF not really")
    bw.write_wheel(b, "1.2.3", plat, b"\x7fELF not really")
    assert a.read_bytes() == b.read_bytes()


def test_wheel_installs_offline_and_runs_demo(host_wheel: Path, offline_env: Callable[..., dict[str, str]], tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300, env=offline_env())
    bindir = venv / "bin"
    py = bindir / "python"
    pip = subprocess.run([str(py), "-m", "pip", "install", "--no-index", "--quiet", str(host_wheel)], capture_output=True, text=True, timeout=300, env=offline_env())
    assert pip.returncode == 0, pip.stderr

    env = offline_env(str(bindir))
    assert shutil.which("callproof", path=env["PATH"]) == str(bindir / "callproof"), "the binary is on the environment's PATH"
    want = bw.go_version() + "\n"
    assert subprocess.run(["callproof", "version"], capture_output=True, text=True, env=env, timeout=60, check=True).stdout == want
    assert subprocess.run([str(py), "-m", "callproof", "version"], capture_output=True, text=True, env=env, timeout=60, check=True).stdout == want
    probe = "import callproof; print(callproof.binary()); print(callproof.version())"
    lines = subprocess.run([str(py), "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60, check=True).stdout.split()
    assert lines == [str((bindir / "callproof").resolve()), bw.pep440(bw.go_version())]

    # Exit codes pass through python -m: a usage error is still 2.
    assert subprocess.run([str(py), "-m", "callproof", "version", "extra"], capture_output=True, env=env, timeout=60).returncode == 2

    demo = subprocess.run(["callproof", "demo", "--json", "--out", str(tmp_path / "demo")], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert demo.returncode == 0, demo.stderr
    gates = {a["agent"]: a["gate"]["holds"] for a in json.loads(demo.stdout)["agents"]}
    assert gates == {"careful": True, "naive": False}
