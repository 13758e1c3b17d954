"""Token cost of classic tool calling vs ``run_code`` vs hybrid over the scenario suite.

A thin entry point: the suite and the runner live in :mod:`ptcbox.bench` so that
``ptcbox bench tokens`` works from an installed package too.

Run::

    python benchmarks/tokens.py                  # or: ptcbox bench tokens
    python benchmarks/tokens.py --json           # machine-readable
    python benchmarks/tokens.py --scenario budget_overruns --runtime thread
    python benchmarks/tokens.py --strict         # every run_code trajectory explores first
    python benchmarks/tokens.py --base-url URL --model NAME   # a real model ($OPENAI_API_KEY)
"""

from __future__ import annotations

import sys

from ptcbox.bench import main

if __name__ == "__main__":
    sys.exit(main())
