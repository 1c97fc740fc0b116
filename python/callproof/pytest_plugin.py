"""callproof's pytest plugin (entry point ``pytest11``): one test item per call.

With ``--callproof-agent URL``, pytest collects one item per call of the
suite (``callproof plan --json``): node id ``callproof/SUITE::CALL``, CALL
being the scenario id, or ``SCENARIO.tK`` with trials. The first item of a
run places all the selected calls in one ``callproof run`` (at most
``--callproof-concurrency`` at once, as the CLI places them), and every item
then passes or fails on its own call: a call without end-to-end integrity
fails with the failing axes, the root-cause buckets and the events they cite
(``callproof explain``, the text callprooftest prints). The results directory
stays for ``callproof show``, ``report`` and ``gate``.

Under pytest-xdist each of N workers places its own shard (``--shard I/N``,
into ``OUT/shards/I-of-N``; a worker that meets another shard's item waits for
it under a file lock), and the controller merges the shards into ``OUT/run``
(``callproof merge``): one run for ``callproof gate``.

The ``callproof`` fixture places runs from a test and returns their scores
as dataclasses (:mod:`callproof.scores`).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Sequence

import pytest

from callproof import binary
from callproof.scores import CallScore, load_scores

__all__ = ["Callproof", "CallproofError", "Run"]

# The default of --callproof-timeout: how long one run may take, and so how
# long a worker waits for another's shard.
DEFAULT_TIMEOUT = 1800.0
# Calls at once in the whole session (callproof run's own default); under
# xdist the workers' shards share it.
DEFAULT_CONCURRENCY = 8
_TAIL = 4000  # characters of a failed command's stderr kept for a message

_RUN_EXIT = {0: "completed", 2: "bad usage or input", 3: "broken run (a harness error)", 4: "cut short", 5: "no agent answers at --agent"}


class CallproofError(Exception):
    """A callproof command failed before it produced a run."""


@dataclass(frozen=True)
class Run:
    """A finished ``callproof run``: its directory, exit code and scores."""

    dir: Path
    exit_code: int
    calls: tuple[CallScore, ...]
    stdout: str = field(repr=False, default="")
    stderr: str = field(repr=False, default="")

    def __getitem__(self, call: str) -> CallScore:
        for c in self.calls:
            if c.call == call:
                return c
        raise KeyError(f"no call {call!r} in {self.dir}")

    def __iter__(self) -> Iterator[CallScore]:
        return iter(self.calls)

    def __len__(self) -> int:
        return len(self.calls)

    @property
    def failed(self) -> tuple[CallScore, ...]:
        return tuple(c for c in self.calls if not c.integrity)


def _cli(args: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary()), *args], capture_output=True, text=True, timeout=timeout, check=False)


def _place(args: Sequence[str], timeout: float) -> tuple[int, str]:
    """Runs ``callproof run ARGS``: its exit code and stderr."""
    try:
        p = _cli(args, timeout)
    except subprocess.TimeoutExpired:
        return -1, f"callproof run took longer than --callproof-timeout {timeout:g}s"
    return p.returncode, p.stderr


def _tail(s: str) -> str:
    s = s.strip()
    return s if len(s) <= _TAIL else "…" + s[-_TAIL:]


@dataclass
class Settings:
    """The plugin's options, as the command line gave them."""

    agent: str | None
    suite: str
    only: str | None
    transport: str | None
    scale: float | None
    trials: int
    concurrency: int
    out: Path
    shard: str | None
    run_args: list[str]
    timeout: float

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        g = config.getoption
        return cls(
            agent=g("callproof_agent"),
            suite=g("callproof_suite"),
            only=g("callproof_only"),
            transport=g("callproof_transport"),
            scale=g("callproof_scale"),
            trials=g("callproof_trials"),
            concurrency=g("callproof_concurrency"),
            out=Path(g("callproof_out")).absolute(),
            shard=g("callproof_shard"),
            run_args=list(g("callproof_run_arg") or ()),
            timeout=g("callproof_timeout"),
        )

    def run_flags(self, agent: str, suite: str, trials: int) -> list[str]:
        args = ["--agent", agent, "--suite", suite]
        if trials != 1:
            args += ["--trials", str(trials)]
        if self.transport:
            args += ["--transport", self.transport]
        if self.scale is not None:
            args += ["--scale", repr(self.scale)]
        args += ["--concurrency", str(self.concurrency)]
        return args + self.run_args


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("callproof", "callproof: one test per call of a suite placed against a voice agent")
    g.addoption("--callproof-agent", metavar="URL", help="the agent's URL (ws://…, or the signaling URL for webrtc): collect one test per call of the suite")
    g.addoption("--callproof-suite", default="core", metavar="SUITE", help="core, extended, or a scenario file or directory (default: core)")
    g.addoption("--callproof-only", metavar="IDS", help="comma-separated scenario ids to place (default: the whole suite)")
    g.addoption("--callproof-transport", metavar="WIRE", help="native (default), twilio, webrtc or pipecat-eval (callproof run --transport)")
    g.addoption("--callproof-scale", type=float, metavar="F", help="time scale offered to the agent (callproof run's default: 1, real time)")
    g.addoption("--callproof-trials", type=int, default=1, metavar="K", help="place every scenario K times (items SCENARIO.t1 … .tK)")
    g.addoption("--callproof-concurrency", type=int, default=DEFAULT_CONCURRENCY, metavar="N", help=f"calls at once, shared by the xdist workers' shards (default: {DEFAULT_CONCURRENCY})")
    g.addoption("--callproof-out", default="callproof-results", metavar="DIR", help="where results directories are kept: DIR/run, and DIR/shards under xdist (default: callproof-results)")
    g.addoption("--callproof-shard", metavar="I/N", help="collect and place only shard I (0-based) of N (callproof run --shard), e.g. one of N CI machines")
    g.addoption("--callproof-run-arg", action="append", metavar="ARG", help="one more argument for callproof run, e.g. --callproof-run-arg=--signaling=whip (repeatable)")
    g.addoption("--callproof-timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S", help=f"seconds one callproof run may take (default: {DEFAULT_TIMEOUT:g})")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _worker_shard(config: pytest.Config) -> tuple[int, int] | None:
    """(I, N) for xdist worker gwI of N; None outside xdist."""
    wi: dict[str, Any] | None = getattr(config, "workerinput", None)
    if not wi:
        return None
    m = re.fullmatch(r"gw(\d+)", str(wi.get("workerid", "")))
    count = int(wi.get("workercount", 0) or 0)
    if not m or count < 1:
        return None
    return int(m.group(1)), count


_STATE = pytest.StashKey["_State"]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "callproof: a call placed by callproof's pytest plugin")
    s = Settings.from_config(config)
    config.stash[_STATE] = _State(s, _worker_shard(config))
    if s.agent and not _is_worker(config):
        # A fresh session: what an earlier one left is replaced, never read.
        shutil.rmtree(s.out / "shards", ignore_errors=True)
        for stale in s.out.glob(".*.done"):
            stale.unlink()


@dataclass
class _Placed:
    exit_code: int
    stderr: str
    explained: dict[str, dict[str, Any]]


@dataclass
class _Unit:
    """One ``callproof run`` of the session: the whole selection, or one shard."""

    dir: Path
    shard: str | None
    placed: _Placed | None = None

    def ensure(self, state: _State) -> _Placed:
        """Places the unit's calls once for the whole session, whichever
        process (xdist worker) gets there first; the others wait for it."""
        if self.placed is not None:
            return self.placed
        s = state.settings
        self.dir.parent.mkdir(parents=True, exist_ok=True)
        done = self.dir.parent / f".{self.dir.name}.done"
        with open(self.dir.parent / f".{self.dir.name}.lock", "w") as lock:
            deadline = time.monotonic() + s.timeout + 60
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise CallproofError(f"waited {s.timeout + 60:g}s for another worker to place {self.dir}") from None
                    time.sleep(0.1)
            if not done.exists():
                if state.worker and not s.shard:
                    # N workers' shards run at once: they share the bound.
                    s = replace(s, concurrency=max(1, s.concurrency // state.worker[1]))
                args = ["run", "--out", str(self.dir), "--force", *s.run_flags(str(s.agent), s.suite, s.trials)]
                if state.only:
                    args += ["--only", state.only]
                if self.shard:
                    args += ["--shard", self.shard]
                code, err = _place(args, s.timeout)
                if code == 3:
                    # A harness error (a call this machine was too busy to
                    # keep on time, mostly) says nothing about the agent:
                    # those calls are placed once more, one at a time, in
                    # the same directory, as callprooftest does.
                    code, again = _place(["run", "--resume", str(self.dir), "--concurrency", "1"], s.timeout)
                    err += f"\nplaced the harness errors again (callproof run --resume, --concurrency 1): exit {code}\n{again}"
                done.write_text(json.dumps({"exit": code, "stderr": _tail(err)}))
            info = json.loads(done.read_text())
        explained: dict[str, dict[str, Any]] = {}
        if (self.dir / "run.jsonl").exists():
            p = _cli(["explain", "--json", str(self.dir)], 300)
            if p.returncode == 0:
                for line in p.stdout.splitlines():
                    d = json.loads(line)
                    explained[d["call"]] = d
            else:
                info["stderr"] += "\n" + _tail(p.stderr)
        self.placed = _Placed(int(info["exit"]), str(info["stderr"]), explained)
        return self.placed


class _State:
    """The session's plan: which calls, placed by which unit."""

    def __init__(self, settings: Settings, worker: tuple[int, int] | None) -> None:
        self.settings = settings
        self.worker = worker
        self.only: str | None = settings.only
        self.units: dict[str, _Unit] = {}
        self.merge: str | None = None  # what merging the shards said (controller)

    def plan(self, shard: str | None = None) -> list[dict[str, Any]]:
        s = self.settings
        args = ["plan", "--json", "--suite", s.suite, "--trials", str(s.trials)]
        if s.only:
            args += ["--only", s.only]
        if shard:
            args += ["--shard", shard]
        p = _cli(args, 120)
        if p.returncode != 0:
            raise pytest.UsageError(f"callproof plan: {_tail(p.stderr)}")
        calls: list[dict[str, Any]] = json.loads(p.stdout)["calls"]
        return calls

    def unit(self, key: str, dir: Path, shard: str | None) -> _Unit:
        return self.units.setdefault(key, _Unit(dir, shard))


class SuiteNode(pytest.Collector):
    """The suite's calls' parent node (``callproof/SUITE``); it collects nothing itself."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        return []


class CallItem(pytest.Item):
    """One call of the suite: passes when the call has end-to-end integrity."""

    def __init__(self, *, call: dict[str, Any], unit: _Unit, state: _State, **kw: Any) -> None:
        super().__init__(**kw)
        self.call: str = call["call"]
        self.scenario: str = call["scenario"]
        self.trial: int = call["trial"]
        self._unit = unit
        self._state = state
        self.add_marker("callproof")
        self.user_properties += [("scenario", self.scenario), ("trial", str(self.trial))]

    def runtest(self) -> None:
        placed = self._unit.ensure(self._state)
        d = placed.explained.get(self.call)
        if d is None:
            why = _RUN_EXIT.get(placed.exit_code, f"exit {placed.exit_code}")
            pytest.fail(f"call {self.call} has no history in {self._unit.dir}: callproof run: {why}\n{placed.stderr}", pytrace=False)
        self.user_properties.append(("outcome", d["outcome"]))
        if not d["integrity"]:
            # The session's run: a shard's directory merges into it at the end.
            pytest.fail(f"{d['explain']}\n  (callproof show {self._state.settings.out / 'run'} {self.call})", pytrace=False)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"callproof call {self.call}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Adds the suite's calls before -k, -m and --deselect select among them."""
    state = config.stash[_STATE]
    s = state.settings
    if not s.agent:
        return
    if s.shard and state.worker:
        # One machine's shard, spread over this machine's workers: the
        # first to need it places it, the others wait and read it.
        calls = state.plan(s.shard)
        units = {c["call"]: state.unit("run", s.out / "run", s.shard) for c in calls}
    elif state.worker:
        i, n = state.worker
        units = {}
        for k in range(n):
            shard = f"{k}/{n}"
            for c in state.plan(shard):
                units[c["call"]] = state.unit(shard, s.out / "shards" / f"{k}-of-{n}", shard)
        calls = state.plan()
    else:
        calls = state.plan(s.shard)
        units = {c["call"]: state.unit("run", s.out / "run", s.shard) for c in calls}
    suite = SuiteNode.from_parent(session, name=f"callproof/{Path(s.suite).name}", nodeid=f"callproof/{Path(s.suite).name}")
    for c in calls:
        items.append(CallItem.from_parent(suite, name=c["call"], call=c, unit=units[c["call"]], state=state))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Narrows the run to the scenarios the selection kept (-k, -m, --deselect)."""
    state = session.config.stash[_STATE]
    selected = [i for i in session.items if isinstance(i, CallItem)]
    if not selected or not state.settings.agent:
        return
    every = {c["scenario"] for c in state.plan()}
    kept = sorted({i.scenario for i in selected})
    if set(kept) != every:
        state.only = ",".join(kept)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash[_STATE]
    s = state.settings
    if not s.agent:
        return
    selected = any(isinstance(i, CallItem) for i in session.items)
    if state.worker and not s.shard and selected and not session.shouldstop and not session.shouldfail:
        # Every shard must be there for the merge, even one whose items
        # all went elsewhere or were deselected: each worker sees to its own.
        i, n = state.worker
        shard = f"{i}/{n}"
        try:
            state.unit(shard, s.out / "shards" / f"{i}-of-{n}", shard).ensure(state)
        except CallproofError:
            pass
        return
    if _is_worker(session.config):
        return
    shards = sorted((d for d in (s.out / "shards").glob("*-of-*") if d.is_dir()), key=lambda d: int(d.name.split("-", 1)[0]))
    if shards:
        p = _cli(["merge", "--force", str(s.out / "run"), *map(str, shards)], 600)
        state.merge = p.stdout.strip() if p.returncode == 0 else f"merge failed: {_tail(p.stderr)}"
        if p.returncode != 0 and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash[_STATE]
    s = state.settings
    if not s.agent or _is_worker(config) or not (s.out / "run").exists():
        return
    tr = terminalreporter
    tr.section("callproof")
    if state.merge:
        tr.write_line(f"callproof: {state.merge}")
    run = s.out / "run"
    tr.write_line(f"callproof: results in {run} (callproof show {run} CALL; callproof gate {run})")


def _in_plan_order(d: Path, scores: list[CallScore]) -> list[CallScore]:
    """The scores in the order the run planned its calls (scores.jsonl has
    them in the order they finished)."""
    try:
        planned: list[str] = json.loads((d / "meta.json").read_text())["planned"]
    except (OSError, ValueError, KeyError):
        return scores
    at = {c: i for i, c in enumerate(planned)}
    return sorted(scores, key=lambda s: at.get(s.call, len(at)))


class Callproof:
    """The ``callproof`` fixture: places runs from a test and returns typed scores.

    Defaults come from the plugin's options (``--callproof-agent``, suite,
    transport, scale, trials, concurrency); each run goes into its own
    directory under the test's ``tmp_path`` unless ``out`` is given.
    """

    def __init__(self, settings: Settings, tmp: Path) -> None:
        self._s = settings
        self._tmp = tmp
        self._n = 0

    def run(
        self,
        agent: str | None = None,
        suite: str | None = None,
        *,
        only: Sequence[str] = (),
        trials: int | None = None,
        transport: str | None = None,
        scale: float | None = None,
        out: Path | str | None = None,
        args: Sequence[str] = (),
    ) -> Run:
        """Places a suite (``callproof run``) and returns its scores.

        Unset arguments take the plugin's options; ``args`` are more flags
        for ``callproof run`` (``--signaling whip``, ``--seed 7``).

        Raises CallproofError when the run did not happen (bad usage, exit 2;
        no agent answers, exit 5); a run with verdicts is returned, whatever
        they are, with its exit code (3 when a call was the harness's fault).
        """
        agent = agent or self._s.agent
        if not agent:
            raise CallproofError("no agent: pass agent= or --callproof-agent URL")
        self._n += 1
        dest = Path(out) if out is not None else self._tmp / f"callproof-run-{self._n}"
        flags = replace(self._s, transport=transport or self._s.transport, scale=scale if scale is not None else self._s.scale)
        cmd = ["run", "--out", str(dest), "--force", *flags.run_flags(agent, suite or self._s.suite, trials or self._s.trials), *args]
        if only:
            cmd += ["--only", ",".join(only)]
        p = _cli(cmd, self._s.timeout)
        if p.returncode in (2, 5) or not (dest / "scores.jsonl").exists():
            raise CallproofError(f"callproof run exited {p.returncode}: {_tail(p.stderr)}")
        return Run(dest, p.returncode, tuple(_in_plan_order(dest, load_scores(dest))), p.stdout, p.stderr)

    def gate(self, run: Run | Path | str, *args: str) -> subprocess.CompletedProcess[str]:
        """``callproof gate ARGS DIR``: exit 0 when the release gate holds."""
        d = run.dir if isinstance(run, Run) else Path(run)
        return _cli(["gate", *args, str(d)], 600)

    def explain(self, run: Run | Path | str, call: str) -> str:
        """Why one call fell short, as the plugin's failures print it."""
        d = run.dir if isinstance(run, Run) else Path(run)
        p = _cli(["explain", str(d), call], 300)
        if p.returncode != 0:
            raise CallproofError(_tail(p.stderr))
        return p.stdout.rstrip("\n")


@pytest.fixture
def callproof(request: pytest.FixtureRequest, tmp_path: Path) -> Callproof:
    """Places callproof runs from a test; see :class:`Callproof`."""
    return Callproof(request.config.stash[_STATE].settings, tmp_path)
