"""What the wheel tests share: the build script, and the wheels built once.

The wheels are built once per session into a temporary directory (the Go
build cache makes a rebuild cheap); test_wheel.py and test_pytest_plugin.py
both install this machine's wheel from there.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_builder() -> None:
    spec = importlib.util.spec_from_file_location("build_wheel", ROOT / "scripts" / "build_wheel.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["build_wheel"] = mod  # dataclasses resolve the module by name; tests import it so
    spec.loader.exec_module(mod)


_load_builder()
import build_wheel as bw  # noqa: E402  (registered just above)


def host_platform() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    name = f"{sys.platform}-{arch}"
    assert name in bw.PLATFORMS, f"no wheel is built for this machine ({sys.platform} {machine})"
    return name


def _offline_env(extra_path: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    if extra_path:
        env["PATH"] = extra_path + os.pathsep + "/usr/bin:/bin"
    return env


@pytest.fixture(scope="session")
def offline_env() -> Callable[[str | None], dict[str, str]]:
    """The environment for pip and the installed tools: no index, no user config."""
    return _offline_env


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_wheel.py"), "--out", str(out)], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    built = {Path(line) for line in proc.stdout.split()}
    assert built == set(out.glob("*.whl")), "it prints every wheel it wrote"
    version = bw.pep440(bw.go_version())
    return {name: out / bw.wheel_name(version, plat) for name, plat in bw.PLATFORMS.items()}


@pytest.fixture(scope="session")
def host_wheel(wheels: dict[str, Path]) -> Path:
    """This machine's wheel."""
    return wheels[host_platform()]
