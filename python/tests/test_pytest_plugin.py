"""The pytest plugin the wheel ships, run as a user runs it.

A fresh virtual environment gets only the built wheel and pytest with
pytest-xdist, installed offline from .venv/wheelhouse (the hash-pinned
wheels of requirements-test.txt that scripts/install-python.sh keeps); the
reference agents `careful` and `naive` run from that environment's own
binary on loopback. Each pytest below runs in its own project directory,
the core suite at scale 0.2.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = ROOT / ".venv" / "wheelhouse"
SCALE = "0.2"  # 0.1 leaves the careful agent too little slack on a loaded machine


@dataclass(frozen=True)
class Env:
    bindir: Path
    env: dict[str, str]
    careful: str  # the agents' URLs
    naive: str

    def pytest(self, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        cwd.mkdir(parents=True, exist_ok=True)
        cmd = [str(self.bindir / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
        return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=self.env, timeout=600)

    def callproof(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.bindir / "callproof"), *args], capture_output=True, text=True, env=self.env, timeout=300)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the agent on port {port} exited {proc.returncode}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"no agent listening on 127.0.0.1:{port} within 30s")


@pytest.fixture(scope="session")
def venv(host_wheel: Path, offline_env: Callable[..., dict[str, str]], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    assert any(WHEELHOUSE.glob("pytest_xdist-*.whl")), f"no wheelhouse at {WHEELHOUSE}: run scripts/install-python.sh"
    root = tmp_path_factory.mktemp("plugin")
    v = root / "venv"
    py = str(v / "bin" / "python")
    # This environment's pip installs into the fresh one (pip 22.3 and
    # later: --python), which then needs no pip of its own: ensurepip takes
    # 15 s on a busy machine.
    if tuple(int(x) for x in metadata.version("pip").split(".")[:2]) >= (22, 3):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(v)], check=True, timeout=300, env=offline_env())
        pip_cmd = [sys.executable, "-m", "pip", "--python", py]
    else:
        subprocess.run([sys.executable, "-m", "venv", str(v)], check=True, timeout=300, env=offline_env())
        pip_cmd = [py, "-m", "pip"]
    for args in (
        ["--require-hashes", "--find-links", str(WHEELHOUSE), "-r", str(ROOT / "python" / "requirements-test.txt")],
        ["--no-deps", str(host_wheel)],
    ):
        pip = subprocess.run([*pip_cmd, "install", "--no-index", "--quiet", *args], capture_output=True, text=True, timeout=300, env=offline_env())
        assert pip.returncode == 0, pip.stderr
    env = offline_env(str(v / "bin"))
    agents: list[subprocess.Popen[bytes]] = []
    urls = []
    try:
        for name in ("careful", "naive"):
            port = _free_port()
            p = subprocess.Popen([str(v / "bin" / "callproof"), "agent", name, "--listen", f"127.0.0.1:{port}"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            agents.append(p)
            _wait_listening(port, p)
            urls.append(f"ws://127.0.0.1:{port}/")
        yield Env(v / "bin", env, urls[0], urls[1])
    finally:
        for p in agents:
            p.terminate()
            p.wait(timeout=30)


def _suite(e: Env) -> list[str]:
    p = e.callproof("plan")
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def _failed(out: str) -> set[str]:
    return set(re.findall(r"^FAILED callproof/core::(\S+) - ", out, re.M))


def test_careful_passes_every_call_on_two_workers_one_gateable_run(venv: Env, tmp_path: Path) -> None:
    calls = _suite(venv)
    p = venv.pytest(tmp_path, "--callproof-agent", venv.careful, "--callproof-scale", SCALE, "-n", "2", "--junitxml", "junit.xml")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"{len(calls)} passed" in p.stdout

    # pytest's own JUnit file lists every call, under the suite's class.
    cases = ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
    assert sorted((c.get("classname"), c.get("name")) for c in cases) == sorted(("callproof.core", c) for c in calls)

    # Each worker placed one shard; the controller merged them into one run.
    out = tmp_path / "callproof-results"
    shards = sorted(d.name for d in (out / "shards").iterdir() if d.is_dir())
    assert shards == ["0-of-2", "1-of-2"]
    placed = [json.loads((out / "shards" / s / "meta.json").read_text())["planned"] for s in shards]
    assert all(placed) and sorted(placed[0] + placed[1]) == sorted(calls), "two disjoint shards cover the suite"
    assert f"merged 2 runs into {out / 'run'}: {len(calls)} calls" in p.stdout
    g = venv.callproof("gate", str(out / "run"))
    assert g.returncode == 0, g.stdout + g.stderr
    assert "release gate: HOLDS" in g.stdout


def test_naive_fails_its_failing_calls_with_axes_and_buckets(venv: Env, tmp_path: Path) -> None:
    p = venv.pytest(tmp_path, "--callproof-agent", venv.naive, "--callproof-scale", SCALE, "-n", "2")
    assert p.returncode == 1, p.stdout + p.stderr
    run = tmp_path / "callproof-results" / "run"
    scores = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    short = {s["call"] for s in scores if not s["integrity"]}
    assert short and len(short) < len(scores)
    assert _failed(p.stdout) == short, "exactly the calls without end-to-end integrity fail"

    # A failure reads as callprooftest's: axes, buckets, the cited events.
    head = re.search(r"^_+ callproof call corr-02 _+$(.*?)^(?:_{5}|=)", p.stdout, re.M | re.S)
    assert head, p.stdout
    text = head.group(1)
    assert "call corr-02 (scenario corr-02): scored" in text
    assert re.search(r"^  stale_write_prevented: fail$", text, re.M)
    assert re.search(r"^  bucket stale_tool_args \(primary\)$", text, re.M)
    assert re.search(r"^    #\d+ +[0-9.]+ms backend +tool\.received ", text, re.M), "the cited events"
    assert f"(callproof show {run} corr-02)" in text

    g = venv.callproof("gate", str(run))
    assert g.returncode == 1, g.stdout + g.stderr
    assert "release gate: DOES NOT HOLD" in g.stdout


def test_selection_places_only_the_selected_calls(venv: Env, tmp_path: Path) -> None:
    p = venv.pytest(tmp_path, "--callproof-agent", venv.naive, "--callproof-scale", SCALE, "-k", "corr-01 or corr-02", "-rA")
    assert p.returncode == 1, p.stdout + p.stderr
    assert _failed(p.stdout) == {"corr-02"}
    assert re.search(r"^1 failed, 1 passed, \d+ deselected", p.stdout, re.M), p.stdout
    meta = json.loads((tmp_path / "callproof-results" / "run" / "meta.json").read_text())
    assert meta["planned"] == ["corr-01", "corr-02"]


FIXTURE_TEST = '''
import os
from callproof.scores import AxisResult, CallScore

def test_scores(callproof):
    run = callproof.run(agent=os.environ["AGENT"], only=["corr-01", "corr-02"], scale=0.2)
    assert run.exit_code == 0
    assert [c.call for c in run] == ["corr-01", "corr-02"]
    bad = run["corr-02"]
    assert isinstance(bad, CallScore) and isinstance(bad.axes[0], AxisResult)
    assert not bad.integrity and bad.primary == "stale_tool_args"
    assert bad.verdict("stale_write_prevented") == "fail"
    assert bad.verdict("captured") == "pass"
    assert "stale_write_prevented" in bad.failing_axes
    assert bad.buckets[0].findings[0].events, "findings cite events"
    assert run["corr-01"].integrity and run.failed == (bad,)
    assert "bucket stale_tool_args (primary)" in callproof.explain(run, "corr-02")
    assert callproof.gate(run).returncode == 1
'''


def test_fixture_returns_typed_scores(venv: Env, tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "test_fixture.py").write_text(FIXTURE_TEST)
    env = dict(venv.env, AGENT=venv.naive)
    p = subprocess.run([str(venv.bindir / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_fixture.py"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 passed" in p.stdout


def test_one_machines_shard(venv: Env, tmp_path: Path) -> None:
    only = "corr-01,corr-02,corr-03,tf-01,tf-02,int-01"
    p = venv.pytest(tmp_path, "--callproof-agent", venv.careful, "--callproof-scale", SCALE, "--callproof-only", only, "--callproof-shard", "1/2", "-rA")
    assert p.returncode == 0, p.stdout + p.stderr
    want = venv.callproof("plan", "--only", only, "--shard", "1/2").stdout.split()
    assert want and set(re.findall(r"^PASSED callproof/core::(\S+)$", p.stdout, re.M)) == set(want)
    meta = json.loads((tmp_path / "callproof-results" / "run" / "meta.json").read_text())
    assert meta["shard"]["index"] == 1 and meta["shard"]["count"] == 2 and sorted(meta["planned"]) == sorted(want)


def test_documented_defaults(venv: Env, tmp_path: Path) -> None:
    """python/README.md's defaults are the plugin's, and its concurrency is run's."""
    m = re.search(r"-concurrency int\n\s+calls at once \(default (\d+)\)", venv.callproof("run", "--help").stdout)
    assert m, "callproof run --help states its --concurrency default"
    readme = (ROOT / "python" / "README.md").read_text()
    assert f"| `--callproof-concurrency N` | calls at once (default {m.group(1)})" in readme
    help = re.sub(r"\s+", " ", venv.pytest(tmp_path, "--help").stdout)
    assert f"shared by the xdist workers' shards (default: {m.group(1)})" in help
    assert "| `--callproof-timeout S` | seconds one run may take (default 1800) |" in readme and "(default: 1800)" in help
    assert "| `--callproof-out DIR` | where results are kept (default `callproof-results`)" in readme and "(default: callproof-results)" in help
