"""``python -m callproof ARGS`` runs ``callproof ARGS``, replacing this process."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

from callproof import binary


def main() -> NoReturn:
    exe = str(binary())
    os.execv(exe, [exe, *sys.argv[1:]])


if __name__ == "__main__":
    main()
