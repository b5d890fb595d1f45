"""numba's compiler for the model kernels, with a cache keyed by each kernel file's own sources.

A kernel file is a module that takes ``njit`` from here. numba checks a cached function against
its own file only, so a kernel compiled against an older version of a file it calls into could be
served from its cache. :class:`KernelCacheLocator` stamps a kernel file's cache with the hash of
that file and of every kernel file it imports, transitively, and keeps it in a folder named by the
file and that hash: an edit to one model's kernels recompiles those and the kernels that import
them, and no others. It is tried before numba's own locators (a user who sets
NUMBA_CACHE_LOCATOR_CLASSES chooses for themselves); files outside simcore keep numba's.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
from pathlib import Path

from numba import jit, njit
from numba.core import caching, config

__all__ = ["njit", "jit_module", "KernelCacheLocator", "kernel_sources", "sources_digest", "PACKAGE"]

#: the simcore package folder: the files whose kernels this locator keys
PACKAGE = Path(__file__).resolve().parents[1]
_JIT = "simcore.core.jit"


def _module_file(name: str, root: Path) -> Path:
    """The file of module ``name`` (``simcore.x.y``) under the package folder ``root``."""
    path = root.joinpath(*name.split(".")[1:])
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def simcore_imports(path: Path, root: Path = PACKAGE) -> list[Path]:
    """The simcore modules ``path`` imports (other than this one), as files under ``root``;
    ``from pkg import mod`` names the module ``pkg.mod`` when that is a file."""
    return list(_imports(path.read_text(), str(path), root))


@functools.lru_cache(maxsize=None)
def _imports(text: str, name: str, root: Path) -> tuple[Path, ...]:
    """:func:`simcore_imports` of a file's text (parsed once per process and text)."""
    found = []
    for node in ast.walk(ast.parse(text, name)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            names = [n for n in names[1:] if _module_file(n, root).is_file()] or names[:1]
        else:
            continue
        found += [_module_file(n, root) for n in names if n.split(".")[0] == "simcore" and n != _JIT]
    return tuple(found)


@functools.lru_cache(maxsize=None)
def kernel_sources(path: Path, root: Path = PACKAGE) -> tuple[Path, ...]:
    """``path`` and every simcore file it imports, transitively, sorted."""
    seen, todo = set(), [Path(path)]
    while todo:
        here = todo.pop()
        if here not in seen:
            seen.add(here)
            todo += simcore_imports(here, root)
    return tuple(sorted(seen))


def sources_digest(path: Path, root: Path = PACKAGE) -> str:
    """The hash of :func:`kernel_sources` of ``path``: their names under ``root`` and contents."""
    digest = hashlib.sha256()
    for source in kernel_sources(Path(path), root):
        digest.update(source.relative_to(root).as_posix().encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def _kernel_digest(path: Path) -> str:
    """:func:`sources_digest` of a kernel file, once per process (the locator asks per function)."""
    return sources_digest(path)


def jit_module(namespace: dict, **options) -> None:
    """numba's ``jit_module`` for the module whose globals are ``namespace``: every function
    defined there is replaced by its ``jit(**options)`` dispatcher (called at the end of a kernel
    file with ``globals()``). numba's own finds the module with ``inspect.stack()``, which reads
    the source of every calling frame: about 50 ms a kernel file, paid by every process."""
    name = namespace["__name__"]
    for key, obj in list(namespace.items()):
        if inspect.isfunction(obj) and obj.__module__ == name:
            namespace[key] = jit(obj, **options)


class KernelCacheLocator(caching.UserProvidedCacheLocator):
    """numba's user-folder locator (NUMBA_CACHE_DIR), for kernels of simcore only: the folder is
    ``<model folder>_<file>-<digest>`` and the freshness stamp the digest of the file's sources."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        path = Path(py_file).resolve()
        self._digest = _kernel_digest(path)
        self._cache_path = os.path.join(config.CACHE_DIR, f"{path.parent.name}_{path.stem}-{self._digest[:16]}")

    def get_source_stamp(self):
        return self._digest

    @classmethod
    def from_function(cls, py_func, py_file):
        if not Path(py_file).resolve().is_relative_to(PACKAGE):
            return None
        return super().from_function(py_func, py_file)


if KernelCacheLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, KernelCacheLocator)
