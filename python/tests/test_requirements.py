"""The test environment is exactly what python/requirements-*.txt pin.

scripts/install-python.sh installs requirements-test.txt (pytest) and
requirements-pipecat.txt (agents/pipecat's bot, whole closure, --no-deps)
and requirements-livekit.txt (agents/livekit's stock agent: the rest of its
closure, --no-deps) with --require-hashes; these tests keep each file honest (every requirement an exact version with
a sha256 hash, each name once) and check that the environment running them
holds those versions, so a package added by hand shows up as a failure
rather than as a test that passes here and fails on a fresh machine.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

REQUIREMENTS = [Path(__file__).resolve().parents[1] / name for name in ("requirements-test.txt", "requirements-pipecat.txt", "requirements-livekit.txt")]

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][^\s\\]*)$")
_HASH = re.compile(r"^--hash=sha256:[0-9a-f]{64}$")


def _entries(text: str) -> list[list[str]]:
    """Splits the file into requirements, joining backslash continuations."""
    entries: list[list[str]] = []
    current: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("--hash") else raw.strip()
        if not line:
            continue
        cont = line.endswith("\\")
        current.extend(line.rstrip("\\").split())
        if not cont:
            entries.append(current)
            current = []
    assert not current, "the file ends inside a continued line"
    return entries


def _pins(path: Path) -> dict[str, str]:
    pins: dict[str, str] = {}
    for words in _entries(path.read_text()):
        m = _PIN.match(words[0])
        assert m, f"{words[0]!r} is not pinned to an exact version (NAME==VERSION)"
        hashes = words[1:]
        assert hashes, f"{words[0]} has no --hash"
        for h in hashes:
            assert _HASH.match(h), f"{words[0]}: {h!r} is not a sha256 hash option"
        name = m.group(1).lower().replace("_", "-")
        assert name not in pins, f"{name} is listed twice"
        pins[name] = m.group(2)
    return pins


def test_every_requirement_is_pinned_with_a_hash() -> None:
    for path in REQUIREMENTS:
        assert _pins(path), f"no requirements found in {path.name}"


def test_environment_has_the_pinned_versions() -> None:
    for path in REQUIREMENTS:
        for name, version in _pins(path).items():
            assert metadata.version(name) == version, f"{path.name}: {name}: installed {metadata.version(name)}, pinned {version}"


def test_files_agree_on_shared_packages() -> None:
    pins = [_pins(p) for p in REQUIREMENTS]
    for i, a in enumerate(pins):
        for j in range(i + 1, len(pins)):
            b = pins[j]
            for name in a.keys() & b.keys():
                assert a[name] == b[name], f"{name}: {a[name]} in {REQUIREMENTS[i].name}, {b[name]} in {REQUIREMENTS[j].name}"


def test_an_unpinned_line_is_refused() -> None:
    assert _PIN.match("pytest>=9") is None
    assert _PIN.match("pytest") is None


def test_continuations_join() -> None:
    text = "a==1 \\\n    --hash=sha256:" + "0" * 64 + "\n# c\nb==2 --hash=sha256:" + "1" * 64 + "\n"
    assert [w[0] for w in _entries(text)] == ["a==1", "b==2"]
