"""simcore: one simulator core for reproducing five load-balancing papers."""

import hashlib
import os
import sys
from pathlib import Path

__version__ = "0.1.0"

#: the folders (under simcore/) whose code numba compiles and caches
COMPILED = ("models/numa", "models/cluster")


def numba_cache_dir(root: Path = Path(__file__).resolve().parent, base: Path | None = None) -> Path:
    """Where numba keeps the compiled kernels of this version of the sources: a folder named by
    the hash of every file of ``COMPILED``. numba checks a cached function against its own source
    file only, not against the files it calls into (``timing_kernels.py`` calls
    ``kernels.busiest_group``), so a cache kept beside the sources could serve a kernel compiled
    with an older version of another file; a folder per version of them all cannot."""
    digest = hashlib.sha256()
    for folder in COMPILED:
        for path in sorted((root / folder).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    base = base or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numa-lb-repro" / "numba"
    return base / digest.hexdigest()[:16]


def _use_numba_cache() -> None:
    """Point numba's cache at :func:`numba_cache_dir`, unless NUMBA_CACHE_DIR is set or the folder
    cannot be made (numba then keeps its own default)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    try:
        path = numba_cache_dir()
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    os.environ["NUMBA_CACHE_DIR"] = str(path)
    if "numba" in sys.modules:      # imported before simcore: its configuration was already read
        sys.modules["numba"].config.CACHE_DIR = str(path)


_use_numba_cache()
