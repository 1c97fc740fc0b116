"""callproof from Python: the callproof command, shipped as a static binary.

The wheel installs the binary where pip installs scripts (an environment's
``bin``), so ``callproof`` is on the PATH of an active environment;
``python -m callproof`` runs it too. :func:`binary` says where it is.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

__all__ = ["binary", "version"]

_DIST = "callproof"


def version() -> str:
    """The installed wheel's version (PEP 440 form of ``callproof version``)."""
    return metadata.version(_DIST)


def binary() -> Path:
    """The path of the callproof binary this distribution installed.

    Found through the distribution's own RECORD, so it is right for every
    install scheme (a venv, ``--user``, ``--prefix``, ``--target``).
    """
    dist = metadata.distribution(_DIST)
    for entry in dist.files or ():
        if entry.name == "callproof":
            path = Path(str(dist.locate_file(entry))).resolve()
            if path.is_file():
                return path
    raise FileNotFoundError("the callproof binary is not installed with the callproof distribution (reinstall the wheel)")
