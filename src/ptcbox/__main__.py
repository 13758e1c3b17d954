"""``python -m ptcbox``: the ``ptcbox`` command (see :mod:`ptcbox.cli`)."""

from __future__ import annotations

import sys

from ptcbox.cli import main

if __name__ == "__main__":
    sys.exit(main())
