"""Write workflow/envs/simcore.yaml, the conda environment of the Python rules, from requirements.lock.

`snakemake --sdm conda` copies an environment file before conda reads it, so the file names no
path relative to itself: it lists the lock's pins inline (a new lock changes the file, and so
the environment's hash) and installs the project from ${NUMA_LB_REPRO_ROOT}, which the workflow
sets to its own directory and pip expands in requirements. `make lock` runs this script; a test
checks that the committed file is its output.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV_FILE = ROOT / "workflow/envs/simcore.yaml"
HEADER = """\
# Generated from requirements.lock by `make lock` (scripts/conda_env.py): do not edit.
# The software of every Python rule under `snakemake --sdm conda`: Python from conda-forge, then
# the lock's exact pins and the project itself (editable) with pip. NUMA_LB_REPRO_ROOT is set
# by the workflow (workflow/rules/common.smk) to its own directory; pip expands it.
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - pip:
"""


def pins(lock_text: str) -> list[str]:
    """The `name==version` lines of a lock file, without comments."""
    return [line.split("#", 1)[0].strip() for line in lock_text.splitlines() if line.split("#", 1)[0].strip()]


def render(lock_text: str) -> str:
    lines = [f"      - {pin}" for pin in pins(lock_text)] + ["      - -e ${NUMA_LB_REPRO_ROOT}"]
    return HEADER + "\n".join(lines) + "\n"


def main() -> int:
    ENV_FILE.write_text(render((ROOT / "requirements.lock").read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {ENV_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
