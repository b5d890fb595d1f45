"""simcore: one simulator core for reproducing five load-balancing papers."""

import os
import sys
import tempfile
from pathlib import Path

__version__ = "0.1.0"


def cache_bases() -> list[Path]:
    """Where the compiled kernels may be cached, in order: the user's cache folder
    ($XDG_CACHE_HOME or ~/.cache), then the machine's temporary folder (a home that is missing or
    read-only, as on some clusters and in sandboxes)."""
    temp = Path(tempfile.gettempdir()) / f"numa-lb-repro-{os.getuid() if hasattr(os, 'getuid') else 'user'}" / "numba"
    try:
        home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numa-lb-repro" / "numba"
    except (RuntimeError, KeyError):       # no home directory at all
        return [temp]
    return [home, temp]


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            return True
    except OSError:
        return False


def _use_numba_cache(bases: list[Path] | None = None, warn=None) -> Path | None:
    """Point numba's cache at the first of :func:`cache_bases` that can be written (with a warning
    when it is not the first), unless NUMBA_CACHE_DIR is set. simcore.core.jit keeps each kernel
    file in a folder of it named by the hash of that file's sources. With none, numba keeps its
    default (beside the sources) and the warning says why a compilation may fail to be cached."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    warn = warn or (lambda text: print(f"simcore: warning: {text}", file=sys.stderr))
    bases = bases or cache_bases()
    for i, path in enumerate(bases):
        if _writable(path):
            if i:
                warn(f"{bases[0]} cannot be written; the compiled kernels are cached in {path} "
                     "(set NUMBA_CACHE_DIR to choose another folder).")
            os.environ["NUMBA_CACHE_DIR"] = str(path)
            if "numba" in sys.modules:      # imported before simcore: its configuration was already read
                sys.modules["numba"].config.CACHE_DIR = str(path)
            return path
    warn(f"none of {', '.join(map(str, bases))} can be written; set NUMBA_CACHE_DIR to a writable folder, "
         "or the compiled kernels cannot be cached.")
    return None


_use_numba_cache()
