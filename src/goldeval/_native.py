"""Whether the optional C extension (goldeval._fast) may be used: only when it was built from the _fast.c beside it.

An editable install (``pip install -e .``) builds ``_fast*.so`` in place. After ``git pull`` brings a new
``_fast.c``, the old build stays: functions it lacks would silently fall back to the slower paths, and a kernel whose
meaning changed would run with its old meaning. So setup.py compiles the SHA-256 of the source into the extension
(``_fast.SOURCE_SHA256``), and at ``import goldeval`` :func:`disable_if_stale` compares it with the source file
beside the package. A wheel ships no ``_fast.c``, so there is nothing to compare and the built extension is used.

When the build is stale, goldeval warns once on stderr and hides the extension (``sys.modules['goldeval._fast'] =
None``), so every ``from goldeval._fast import ...`` raises ImportError and takes the pure-Python/NumPy definition,
which gives the same results (tests/unit/test_fast_paths.py compares every kernel with it), only slower.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import warnings
from typing import Any

__all__ = ["stale_reason", "disable_if_stale", "StaleExtensionWarning"]

_SOURCE = os.path.join(os.path.dirname(__file__), "_fast.c")  # os.path, not pathlib: import goldeval stays light


#: Set (to the reason) once the warning is given, so that the worker processes a run starts (``--workers``: the
#: forkserver and its children import goldeval again) do not repeat it: ``score --workers 2`` printed it twice,
#: the second time from "multiprocessing/forkserver.py:178".
_WARNED = "GOLDEVAL_STALE_EXTENSION_WARNED"


class StaleExtensionWarning(RuntimeWarning):
    """The C extension was built from another _fast.c than the one installed beside it."""


def source_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 (hex, 64 characters) of a file's bytes; the same digest setup.py compiles into the extension."""
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def stale_reason(module: Any, source: str | os.PathLike[str] = _SOURCE) -> str | None:
    """Why ``module`` (the imported goldeval._fast) must not be used with ``source``, or None when it may.

    None when ``source`` does not exist (a wheel: the build is the shipped one) or when the digest compiled into the
    module (``SOURCE_SHA256``, a 64-hex str) equals the SHA-256 of ``source``'s bytes. Otherwise a sentence naming
    both, for the warning. Raises nothing: an unreadable source is a reason too.
    """
    if not os.path.exists(source):
        return None
    built = getattr(module, "SOURCE_SHA256", None)
    try:
        now = source_sha256(source)
    except OSError as exc:
        return f"its source {source} cannot be read ({exc})"
    if built == now:
        return None
    if built is None:
        return f"it was built before goldeval recorded its source digest, and {os.path.basename(source)} may have changed since"
    return f"it was built from a {os.path.basename(source)} with SHA-256 {built[:12]}…, and the file beside it is now {now[:12]}…"


def disable_if_stale() -> bool:
    """Hide goldeval._fast when its build does not match _fast.c beside it; True when it was hidden.

    Called once by ``goldeval/__init__``. Warns a :class:`StaleExtensionWarning` that says how to rebuild, once
    per process tree (a process started by one that warned hides the extension without a word). Does nothing when
    the extension is absent (it is optional) or already imported.
    """
    if "goldeval._fast" in sys.modules:
        return sys.modules["goldeval._fast"] is None
    if importlib.util.find_spec("goldeval._fast") is None:
        return False
    import goldeval._fast as fast  # optional C extension: may be absent or stale

    reason = stale_reason(fast)
    if reason is None:
        return False
    sys.modules["goldeval._fast"] = None  # type: ignore[assignment]  # later imports raise ImportError: the fallbacks
    sys.modules["goldeval"].__dict__.pop("_fast", None)
    if os.environ.get(_WARNED) == reason:
        return True  # a worker process (--workers, the forkserver): its parent said it already
    os.environ[_WARNED] = reason  # inherited by the processes this one starts, which hide the extension quietly
    warnings.warn(
        f"goldeval: the C extension {os.path.basename(fast.__file__ or 'goldeval._fast')} is out of date ({reason}); using the pure-Python "
        "paths, which give the same results, slower. Rebuild it with: pip install -e .",
        StaleExtensionWarning,
        stacklevel=3,
    )
    return True
