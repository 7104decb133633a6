"""goldeval: score model output against golden references and decide whether a run passes its gates.

The public surface is re-exported here (``__all__`` is pinned by a test). Heavy parts (the data-answer judge,
the LLM judge, the run store) are imported on first use, so ``import goldeval`` stays cheap.
"""

from __future__ import annotations

__version__ = "0.1.0"

from goldeval.errors import GoldevalError, InputError, JudgeError, StoreError

__all__ = [
    "GoldevalError",
    "InputError",
    "JudgeError",
    "StoreError",
    "__version__",
]
