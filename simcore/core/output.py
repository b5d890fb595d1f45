"""Atomic writers: an output file either appears whole or not at all."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Iterator

TEMPORARY = ".tmp"   # the suffix of a file being written


def _prefix(target: Path) -> str:
    return f".{target.name}."


def is_temporary(path: Path, target: Path) -> bool:
    """Whether ``path`` is a temporary file :func:`atomic_path` makes for ``target``."""
    return path.parent == target.parent and path.name.startswith(_prefix(target)) and path.name.endswith(TEMPORARY)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=_prefix(target), suffix=TEMPORARY, dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())   # mkstemp makes 0600; give outputs the usual mode
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_json(path: str | os.PathLike, data) -> None:
    write_text(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def write_csv(path: str | os.PathLike, frame) -> None:
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False, float_format="%.10g")


def write_parquet(path: str | os.PathLike, frame, metadata: dict[bytes, bytes] | None = None) -> None:
    """``frame`` as parquet, with ``metadata`` added to the file's schema metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    if metadata:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
