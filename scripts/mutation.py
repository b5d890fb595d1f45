"""Mutation score of the decision code: `make mutation` (not part of `make test`).

Runs mutmut (configured in pyproject.toml, [tool.mutmut]: simcore/models and simcore/stats with
the fast tests), then prints the score per file and in total:

    score = killed / (mutants - judged equivalent)

where killed counts mutants a test failed on (or timed out on), and every other mutant, including
those no test reaches, counts against the score. Survivors judged equivalent (the mutant cannot
change any observable behaviour) are listed with the reason in tests/mutation-equivalents.yaml,
which this script reads; an entry whose mutant no longer exists or is now killed is reported as
stale. Exit 1 when the score is below --fail-under (default 90).
"""

from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "tests/mutation-equivalents.yaml"
KILLED = {"killed", "timeout", "segfault"}


def sync_package_data() -> None:
    """mutmut regenerates changed Python files in mutants/ but keeps its first copy of everything
    else: bring the package's other files (schemas) up to date before a resumed run."""
    mutants = ROOT / "mutants"
    if not mutants.is_dir():
        return
    for src in (ROOT / "simcore").rglob("*"):
        if src.is_file() and src.suffix not in (".py", ".pyc") and "__pycache__" not in src.parts:
            dst = mutants / src.relative_to(ROOT)
            if not dst.exists() or dst.read_bytes() != src.read_bytes():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)


def run_mutmut(children: int, names: list[str]) -> None:
    """`mutmut run`; it resumes where an interrupted run stopped and retests changed functions."""
    sync_package_data()
    cmd = [sys.executable, "-m", "mutmut", "run", "--max-children", str(children), *names]
    subprocess.run(cmd, cwd=ROOT, check=True)


def statuses() -> dict[str, str]:
    """Mutant name -> mutmut status, for every mutant."""
    out = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    pairs = (line.strip().rsplit(": ", 1) for line in out.splitlines() if ": " in line)
    return {name: status for name, status in pairs}


def equivalents() -> dict[str, str]:
    """Mutant name -> why it cannot change behaviour."""
    data = yaml.safe_load(EQUIVALENTS.read_text(encoding="utf-8")) or []
    return {item["mutant"]: item["reason"] for item in data}


def module_of(name: str) -> str:
    """'simcore.stats.intervals.x_mean__mutmut_3' -> 'simcore/stats/intervals.py'."""
    module = ROOT / name.split(".x_")[0].split(".xǁ")[0].replace(".", "/")
    path = module / "__init__.py" if module.is_dir() else module.with_suffix(".py")
    return str(path.relative_to(ROOT))


def score(status: dict[str, str], equivalent: dict[str, str]) -> tuple[dict, list[str], list[str]]:
    """Per-file [killed, counted] counts, the survivors not judged equivalent, and stale entries."""
    per_file: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    survivors = []
    for name, state in sorted(status.items()):
        if name in equivalent and state not in KILLED:
            continue
        counts = per_file[module_of(name)]
        counts[1] += 1
        if state in KILLED:
            counts[0] += 1
        else:
            survivors.append(f"{name}: {state}")
    stale = [name for name in equivalent if status.get(name, "killed") in KILLED]
    return dict(per_file), survivors, stale


def report(per_file: dict, survivors: list[str], stale: list[str], n_equivalent: int) -> float:
    """Print the table; return the total score in percent."""
    width = max(map(len, per_file), default=10)
    for path, (killed, counted) in sorted(per_file.items()):
        print(f"{path:<{width}}  {killed:5d}/{counted:<5d} {100 * killed / max(counted, 1):6.1f}%")
    killed, counted = (sum(c[i] for c in per_file.values()) for i in (0, 1))
    total = 100 * killed / max(counted, 1)
    print(f"{'total':<{width}}  {killed:5d}/{counted:<5d} {total:6.1f}%  ({n_equivalent} judged equivalent, "
          f"listed in {EQUIVALENTS.relative_to(ROOT)})")
    if survivors:
        print(f"\n{len(survivors)} surviving mutants (inspect with: .venv/bin/mutmut show NAME):")
        print("\n".join("  " + s for s in survivors))
    if stale:
        print(f"\nstale entries in {EQUIVALENTS.name} (killed or gone; remove them): {', '.join(stale)}")
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=2, help="parallel mutant runs (default 2)")
    parser.add_argument("--fail-under", type=float, default=90.0, help="least acceptable score, percent")
    parser.add_argument("--report-only", action="store_true", help="score the last run without running mutmut")
    parser.add_argument("mutants", nargs="*", help="run only these mutants (names as mutmut prints them)")
    args = parser.parse_args(argv)
    if not args.report_only:
        run_mutmut(args.children, args.mutants)
    equivalent = equivalents()
    per_file, survivors, stale = score(statuses(), equivalent)
    total = report(per_file, survivors, stale, len(equivalent) - len(stale))
    return 0 if total >= args.fail_under else 1


if __name__ == "__main__":
    sys.exit(main())
