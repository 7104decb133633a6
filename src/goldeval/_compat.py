"""The old import paths of goldeval's modules, kept working by one import hook (relayout: keep old paths).

Issue 27 gathered each concept into one package (``goldeval.tokens`` is now :mod:`goldeval.freetext.tokens`,
``goldeval.judge`` is :mod:`goldeval.llm`, ...). A user's ``import goldeval.tokens`` or ``from goldeval.scorers
import Scorer`` still works: :class:`OldPaths`, a :data:`sys.meta_path` finder installed by ``goldeval/__init__``,
answers for the old names only, gives the new module itself (the same objects, so ``isinstance`` and
monkeypatching behave as before) and warns with a :class:`DeprecationWarning` naming the new path. A module that
was split (``goldeval.scorers``, ``goldeval.scorers_builtin``) comes back as a small module that looks each name
up in the modules it was split into. There are no shim files at the top level.

Names that moved out of a module that stayed (``score_file`` left :mod:`goldeval.freetext.files` for
:mod:`goldeval.pipeline.files`: running an engine is pipeline work) are served by :func:`moved_attribute`, which
the old module's ``__getattr__`` calls: same object, with a :class:`DeprecationWarning` naming the new module.

Packages that kept an old module's name (``goldeval.freetext``, ``goldeval.labels``, ``goldeval.gates``,
``goldeval.io``) need no alias: each re-exports the old module's public names.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
import warnings
from typing import Any

__all__ = ["MOVED", "MOVED_NAMES", "SPLIT", "OldPaths", "install", "moved_attribute"]

#: old dotted module -> the module it now is (a package's old submodules follow it: goldeval.judge.cache ->
#: goldeval.llm.cache)
MOVED: dict[str, str] = {
    "goldeval.accumulate": "goldeval.scoring.sums",
    "goldeval.tokens": "goldeval.freetext.tokens",
    "goldeval.overlap": "goldeval.freetext.overlap",
    "goldeval.freetext_score": "goldeval.freetext.scorer",
    "goldeval.labelfile": "goldeval.labels.reader",
    "goldeval.agreement": "goldeval.labels.agreement",
    "goldeval.judge": "goldeval.llm",
    "goldeval.spark": "goldeval.engines.spark",
    "goldeval.spark_judge": "goldeval.engines.spark_judge",
    "goldeval.gate_definition": "goldeval.gates.definition",
    "goldeval.gate_metrics": "goldeval.gates.metrics",
    "goldeval.streams": "goldeval.io.streams",
    "goldeval.outputs": "goldeval.io.outputs",
    "goldeval.resultsfile": "goldeval.io.resultsfile",
    "goldeval.ids": "goldeval.io.ids",
}

#: old dotted module that was split -> the modules its names now live in, searched in this order
SPLIT: dict[str, tuple[str, ...]] = {
    "goldeval.scorers": ("goldeval.scoring.protocol", "goldeval.scoring.registry", "goldeval.engines.local"),
    "goldeval.scorers_builtin": ("goldeval.labels.scorer", "goldeval.answers.scorer", "goldeval.freetext.scorer"),
}

#: module that stayed -> {name that left it: the module it now lives in}. The domain packages ran the local engine
#: here before issue 27 put that in the pipeline; the old paths keep working through :func:`moved_attribute`.
MOVED_NAMES: dict[str, dict[str, str]] = {
    "goldeval.freetext": {"score_file": "goldeval.pipeline.files", "score_rows": "goldeval.pipeline.files",
                          "PARALLEL_MIN_ROWS": "goldeval.engines.local"},
    "goldeval.freetext.files": {"score_file": "goldeval.pipeline.files", "score_rows": "goldeval.pipeline.files",
                                "PARALLEL_MIN_ROWS": "goldeval.engines.local"},
    "goldeval.answers": {"judge_file": "goldeval.pipeline.files", "judge_answer_file": "goldeval.pipeline.files"},
    "goldeval.answers.judge": {"judge_file": "goldeval.pipeline.files",
                               "judge_answer_file": "goldeval.pipeline.files"},
    "goldeval.answers.batch": {"judge_file": "goldeval.pipeline.files",
                               "judge_answer_file": "goldeval.pipeline.files"},
}

_PACKAGES = {old: new for old, new in MOVED.items() if old == "goldeval.judge"}


def new_name(old: str) -> str | None:
    """The new module of the old dotted name *old* (a moved package's submodules included), else ``None``."""
    if old in MOVED:
        return MOVED[old]
    for pkg, new in _PACKAGES.items():
        if old.startswith(pkg + "."):
            return new + old[len(pkg):]
    return None


def _warn(message: str) -> None:
    # stacklevel 3: past this function and the loader's method; warnings skips the import machinery's own frames,
    # so the warning names the line of the importing code
    warnings.warn(message, DeprecationWarning, stacklevel=3)


def moved_attribute(module: str, name: str) -> Any:
    """The object *name* of module *module* now is, if it moved (:data:`MOVED_NAMES`), with a DeprecationWarning.

    A module's ``__getattr__`` calls it for the names it no longer defines.

    Args:
        module: The old module's dotted name (its ``__name__``).
        name: The attribute asked for.

    Returns:
        The object, from the module it now lives in (the same object: ``is`` holds).

    Raises:
        AttributeError: *name* did not move out of *module* (the usual "has no attribute" error).

    Source:
        goldeval, issue 27 (a domain package imports no engine).

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     moved_attribute("goldeval.freetext", "score_file").__module__
        'goldeval.pipeline.files'
    """
    new = MOVED_NAMES.get(module, {}).get(name)
    if new is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    # the deprecation path: the one import from a domain package up to the pipeline, on purpose, by its dotted name
    # (so the import graph, and the layers contract, see none: nothing in the package uses these old paths)
    value = getattr(importlib.import_module(new), name)
    # stacklevel 3: past this function and the old module's __getattr__, to the line that asked for the name
    warnings.warn(f"{module}.{name} is deprecated: use {new}.{name} instead.", DeprecationWarning, stacklevel=3)
    return value


class _Split(types.ModuleType):
    """An old module that was split: each name is looked up in the new modules, in order."""

    def __init__(self, name: str, parts: tuple[str, ...]) -> None:
        super().__init__(name, f"Deprecated alias: the names of {name} now live in {', '.join(parts)}.")
        self.__parts = parts

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        for part in self.__parts:
            module = importlib.import_module(part)
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r} (it was split into "
                             f"{', '.join(self.__parts)})")

    def __dir__(self) -> list[str]:
        names: set[str] = set()
        for part in self.__parts:
            names.update(getattr(importlib.import_module(part), "__all__", ()))
        return sorted(names)


# (a loader and a finder by their methods: importlib.abc is not imported, it costs `import goldeval` 20 ms)
class _Alias:  # a loader: create_module / exec_module
    def __init__(self, old: str) -> None:
        self.old = old
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if self.old in SPLIT:
            parts = SPLIT[self.old]
            _warn(f"{self.old} is deprecated: import from {' or '.join(parts[:2])} instead.")
            return _Split(self.old, parts)
        new = new_name(self.old)
        assert new is not None
        module = importlib.import_module(new)
        self.spec = module.__spec__  # (the import system sets __spec__ to the old name's: put it back below)
        _warn(f"{self.old} is deprecated: import {new} instead.")
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # the module is the new one, already executed: importing the old name runs nothing twice
        if self.spec is not None:
            module.__spec__ = self.spec
            module.__loader__ = self.spec.loader


class OldPaths:  # a sys.meta_path finder (find_spec)
    """Finds the old module names of goldeval and gives the new modules (see the module docstring)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("goldeval.") or (fullname not in SPLIT and new_name(fullname) is None):
            return None
        # _Alias is a loader by its methods (create_module / exec_module), not by importlib.abc.Loader's class
        return importlib.machinery.ModuleSpec(fullname, _Alias(fullname))  # type: ignore[arg-type]


def install() -> None:
    """Put the finder on :data:`sys.meta_path` (once)."""
    if not any(isinstance(f, OldPaths) for f in sys.meta_path):
        sys.meta_path.insert(0, OldPaths())
