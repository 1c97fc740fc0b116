"""A results directory's scores as typed Python objects.

``callproof run --out DIR`` writes one ``CallScore`` per line to
``DIR/scores.jsonl`` (docs/CLI.md, "Results directory"); :func:`load_scores`
reads them into the frozen dataclasses below. Only the fields a test
asserts on are kept; the JSON line itself is in :attr:`CallScore.raw`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

__all__ = ["AXES", "AxisResult", "BucketHit", "CallScore", "Finding", "Verdict", "load_scores"]

Verdict = Literal["pass", "fail", "unknown"]

# The six axes, in report order (scorer.Axes()).
AXES = (
    "captured",
    "active_state_correct",
    "tool_args_correct",
    "stale_write_prevented",
    "backend_correct",
    "confirmation_matches_backend",
)

_TRIAL = re.compile(r"^(.*)\.t([1-9][0-9]*)$")


@dataclass(frozen=True)
class Finding:
    """One reason for a verdict; events are sequence numbers in the call's history."""

    text: str
    events: tuple[int, ...] = ()


@dataclass(frozen=True)
class AxisResult:
    axis: str
    verdict: Verdict
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class BucketHit:
    """A root-cause bucket that fits a failed call, with its evidence."""

    bucket: str
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class CallScore:
    call: str
    scenario: str
    trial: int  # 1 for a run without --trials
    outcome: str  # scored, agent_error, harness_error, …
    reason: str
    integrity: bool  # all six axes pass
    axes: tuple[AxisResult, ...]
    primary: str  # the primary bucket; "" for a passing call
    buckets: tuple[BucketHit, ...]
    raw: dict[str, Any] = field(repr=False, compare=False)

    def verdict(self, axis: str) -> Verdict:
        """The verdict on one axis (``unknown`` when the score lacks it)."""
        if axis not in AXES:
            raise KeyError(f"no axis {axis!r}: the axes are {', '.join(AXES)}")
        for a in self.axes:
            if a.axis == axis:
                return a.verdict
        return "unknown"

    @property
    def failing_axes(self) -> tuple[str, ...]:
        return tuple(a.axis for a in self.axes if a.verdict != "pass")

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CallScore:
        call = str(d["call"])
        m = _TRIAL.match(call)
        trial = int(m.group(2)) if m and m.group(1) == d.get("scenario") else 1
        return cls(
            call=call,
            scenario=str(d.get("scenario", "")),
            trial=trial,
            outcome=str(d.get("outcome", "")),
            reason=str(d.get("reason", "")),
            integrity=bool(d.get("integrity", False)),
            axes=tuple(AxisResult(str(a["axis"]), _verdict(a.get("verdict")), _findings(a)) for a in d.get("axes") or ()),
            primary=str(d.get("primary", "")),
            buckets=tuple(BucketHit(str(b["bucket"]), _findings(b)) for b in d.get("buckets") or ()),
            raw=d,
        )


def _verdict(v: object) -> Verdict:
    if v not in ("pass", "fail", "unknown"):
        raise ValueError(f"verdict {v!r} is not pass, fail or unknown")
    return cast(Verdict, v)


def _findings(d: dict[str, Any]) -> tuple[Finding, ...]:
    return tuple(Finding(str(f["text"]), tuple(int(e) for e in f.get("events") or ())) for f in d.get("findings") or ())


def load_scores(path: Path | str) -> list[CallScore]:
    """The scores of a results directory (or a scores.jsonl file), in file order.

    A torn last line (a run killed mid-write) is dropped, as callproof's own
    readers drop it; a bad line anywhere else is an error naming it.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "scores.jsonl"
    lines = p.read_text(encoding="utf-8").split("\n")
    out: list[CallScore] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            if n == len(lines):  # no newline after it: torn
                break
            raise ValueError(f"{p}:{n}: {e}") from None
        out.append(CallScore.from_json(d))
    return out
