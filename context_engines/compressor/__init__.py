"""The default context engine, ``compressor``, one module per phase.

* :mod:`.budget` — trigger, tail budget, summary budget
* :mod:`.pruning` — phase 1, no model call
* :mod:`.boundaries` — phase 2, head and tail
* :mod:`.summary` — phase 3, prompt, template, iterative update
* :mod:`.assembly` — phase 4, the valid result
* :mod:`.failures` — failed summaries, cooldowns, anti-thrashing
"""

from .engine import Compressor

__all__ = ["Compressor"]
