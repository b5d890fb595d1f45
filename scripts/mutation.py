"""Mutation score of the decision code: `make mutation` (not part of `make test`).

Runs mutmut (configured in pyproject.toml, [tool.mutmut]: simcore/models, simcore/stats and simcore/vocabulary with
the fast tests), then prints the score per file and in total:

    score = killed / (mutants - judged equivalent)

where killed counts mutants a test failed on (or timed out on), and every other mutant, including
those no test reaches, counts against the score. Survivors judged equivalent (the mutant cannot
change any observable behaviour) are listed with the reason in tests/mutation-equivalents.yaml,
which this script reads; an entry whose mutant no longer exists or is now killed is reported as
stale. Exit 1 when the score is below --fail-under (default 90).

A complete run of every file takes longer than a working session on two cores, so results are
kept per file: ``--record`` writes each file whose mutants were all tested to
tests/mutation-scores.yaml with the SHA-256 of its source, and ``--part PATH`` runs only the
mutants of the files under PATH (e.g. simcore/models/numa). The score of the code is the sum over
the recorded files; a file whose source changed since its record is stale and counts as not
measured, and so does a file never recorded (``--report-only`` lists both).

mutmut's own state (``mutants/``) stays on the machine that made it, so each run also keeps every
mutant's exit code, with the hash of the function it mutates, in tests/mutation-state.json; a run
on a machine without ``mutants/`` starts from it, and mutmut retests only the functions whose
source changed since (and the mutants never run). A kept exit code is that of the tests of its
day: a test added later reaches an old survivor only when the survivor is named on the command line.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import fnmatch
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "tests/mutation-equivalents.yaml"
RECORDS = ROOT / "tests/mutation-scores.yaml"
STATE = ROOT / "tests/mutation-state.json"  # every mutant's exit code by file and function
SOURCES = ROOT / "mutants/sources.json"  # the scope's source hashes when the last run started
KILLED = {"killed", "timeout", "segfault"}
UNTESTED = "not checked"  # mutmut's status of a mutant it has not run yet


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


def scope() -> list[str]:
    """The files mutmut mutates (pyproject's only_mutate less do_not_mutate), relative to the root."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    patterns, excluded = config["only_mutate"], config.get("do_not_mutate", [])
    files = (str(p.relative_to(ROOT)) for p in (ROOT / "simcore").rglob("*.py"))
    return sorted(f for f in files if any(fnmatch.fnmatch(f, pat) for pat in patterns)
                  and not any(fnmatch.fnmatch(f, pat) for pat in excluded))


def source_hash(path: str) -> str:
    return hashlib.sha256((ROOT / path).read_bytes()).hexdigest()


def part_globs(part: str) -> list[str]:
    """mutmut name globs for the files under ``part`` (a file or a folder)."""
    files = [f for f in scope() if f == part or f.startswith(part.rstrip("/") + "/")]
    if not files:
        raise SystemExit(
            f"mutation.py: --part {part!r} holds no file that mutmut mutates (see pyproject's only_mutate)."
        )
    modules = (f[:-len("/__init__.py")] if f.endswith("/__init__.py") else f[:-3] for f in files)
    return [m.replace("/", ".") + ".x*" for m in modules]


def mutation_env() -> dict:
    """The environment of a mutation run: numba's compiler off (NUMBA_DISABLE_JIT=1), because a
    mutated kernel file holds mutmut's trampolines, which numba cannot compile; the kernels then
    run as the Python they are written in (pool_kernels.py: plain functions compiled by
    ``jit_module``; decorated ``@njit`` kernels are never mutated, mutmut skips decorated
    functions)."""
    import os

    return {**os.environ, "NUMBA_DISABLE_JIT": "1"}


def run_mutmut(children: int, names: list[str]) -> None:
    """`mutmut run`; it resumes where an interrupted run stopped and retests changed functions.
    The sources' hashes at the start are kept, so that only files unchanged since are recorded;
    the mutants' exit codes are kept in STATE afterwards, even when the run is interrupted."""
    restore_state()
    sync_package_data()
    SOURCES.parent.mkdir(exist_ok=True)
    SOURCES.write_text(json.dumps({path: source_hash(path) for path in scope()}, indent=0))
    cmd = [sys.executable, "-m", "mutmut", "run", "--max-children", str(children), *names]
    try:
        subprocess.run(cmd, cwd=ROOT, check=True, env=mutation_env())
    finally:
        save_state()


def function_of(key: str) -> tuple[str, int]:
    """'simcore.m.a.xǁCǁf__mutmut_12' -> ('xǁCǁf', 12): the mangled function and the mutant's number."""
    prefix, number = key.rsplit("__mutmut_", 1)
    return prefix.rsplit(".", 1)[1], int(number)


def functions_in(path: str) -> set[str] | None:
    """The functions of a source file as mutmut mangles their names (``x_f``, ``xǁCǁm``), or None
    when the file does not exist."""
    import ast

    file = ROOT / path
    if not file.is_file():
        return None
    names = set()
    for node in ast.parse(file.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(f"x_{node.name}")
        elif isinstance(node, ast.ClassDef):
            names.update(f"xǁ{node.name}ǁ{item.name}" for item in node.body
                         if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return names


def missing_records() -> list[str]:
    """Records that name a file or function the tree no longer has: files and functions of the
    kept exit codes (STATE), mutants judged equivalent (EQUIVALENTS), files with a score (RECORDS)."""
    missing, known = [], {}

    def exists(path: str, function: str | None = None) -> bool:
        if path not in known:
            known[path] = functions_in(path)
        return known[path] is not None and (function is None or function in known[path])

    for path, functions in load_state().items():
        missing += [f"{STATE.name}: {path}"] if not exists(path) else [
            f"{STATE.name}: {path} {name}" for name in functions if not exists(path, name)]
    for mutant in equivalents():
        if not exists(module_of(mutant), function_of(mutant)[0]):
            missing.append(f"{EQUIVALENTS.name}: {mutant}")
    missing += [f"{RECORDS.name}: {path}" for path in load_records() if not exists(path)]
    return missing


def prune_records() -> list[str]:
    """Drop every record :func:`missing_records` names from its file; returns what was dropped."""
    missing = missing_records()
    gone = set(missing)
    state = {path: {name: entry for name, entry in functions.items() if f"{STATE.name}: {path} {name}" not in gone}
             for path, functions in load_state().items() if f"{STATE.name}: {path}" not in gone}
    STATE.write_text(json.dumps(dict(sorted(state.items())), indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    text = EQUIVALENTS.read_text(encoding="utf-8")
    head, *blocks = text.split("\n- mutant: ")
    kept = [b for b in blocks if f"{EQUIVALENTS.name}: {b.split(chr(10), 1)[0].strip()}" not in gone]
    EQUIVALENTS.write_text("\n- mutant: ".join([head, *kept]), encoding="utf-8")
    records = {path: entry for path, entry in load_records().items() if f"{RECORDS.name}: {path}" not in gone}
    if len(records) < len(load_records()):
        header = "".join(
            line + "\n" for line in RECORDS.read_text(encoding="utf-8").splitlines() if line.startswith("#")
        )
        RECORDS.write_text(header + yaml.safe_dump(records, sort_keys=True), encoding="utf-8")
    return missing


def load_state() -> dict:
    return json.loads(STATE.read_text(encoding="utf-8")) if STATE.exists() else {}


def save_state() -> list[str]:
    """Copy every mutated file's exit codes from mutants/*.meta into STATE, by function with its
    hash (``exit``: codes of mutants 1..n, null where not run); the files written."""
    state, written = load_state(), []
    for path in scope():
        meta_path = ROOT / "mutants" / (path + ".meta")
        if not meta_path.exists():
            continue
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        functions = {name: {"sha": digest, "exit": []} for name, digest in meta["hash_by_function_name"].items()}
        for key, code in meta["exit_code_by_key"].items():
            name, number = function_of(key)
            if name in functions:
                codes = functions[name]["exit"]
                codes.extend([None] * (number - len(codes)))
                codes[number - 1] = code
        kept = state.get(path, {})
        for name, entry in functions.items():  # mutants not run here (a named or interrupted run): keep their old codes
            old = kept.get(name)
            if old and old["sha"] == entry["sha"]:
                codes = entry["exit"]
                codes.extend([None] * (len(old["exit"]) - len(codes)))
                entry["exit"] = [c if c is not None else o for c, o in zip(codes, old["exit"] + [None] * len(codes))]
        state[path] = dict(sorted(functions.items()))
        written.append(path)
    STATE.write_text(json.dumps(dict(sorted(state.items())), indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    return written


def restore_state() -> list[str]:
    """Write mutants/*.meta from STATE for the files mutmut has no state of here; mutmut then
    keeps the exit codes of the functions whose hash is unchanged. The files restored."""
    restored = []
    for path, functions in load_state().items():
        meta_path = ROOT / "mutants" / (path + ".meta")
        if path not in scope() or meta_path.exists() or (ROOT / "mutants" / path).exists():
            continue
        module = path[:-len("/__init__.py")] if path.endswith("/__init__.py") else path[:-3]
        codes = {f"{module.replace('/', '.')}.{name}__mutmut_{i}": code
                 for name, entry in functions.items() for i, code in enumerate(entry["exit"], 1)}
        meta = {"exit_code_by_key": codes, "hash_by_function_name": {n: e["sha"] for n, e in functions.items()},
                "type_check_error_by_key": {}, "durations_by_key": {}, "estimated_durations_by_key": {}}
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        meta_path.write_text(json.dumps(meta, indent=1, ensure_ascii=False), encoding="utf-8")
        restored.append(path)
    return restored


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
    """Per-file [killed, counted] counts, the survivors not judged equivalent, and stale entries:
    killed now, or gone (not among the mutants of a file this run mutated, or of a deleted file);
    the entries of files outside the run's part are not judged."""
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
    scope = {module_of(name) for name in status}     # the files this run's mutants/ holds
    stale = [name for name in equivalent
             if status.get(name) in KILLED or (name not in status and (module_of(name) in scope
                                                                         or not (ROOT / module_of(name)).exists()))]
    return dict(per_file), survivors, stale


def complete_files(status: dict[str, str]) -> set[str]:
    """Files every mutant of which was tested against the current source: unchanged since the
    last run started (a file without mutants counts, once a run has made the others')."""
    if not status or not SOURCES.exists():
        return set()
    started = json.loads(SOURCES.read_text())
    pending = {module_of(name) for name, state in status.items() if state == UNTESTED}
    return {path for path in scope() if path not in pending and started.get(path) == source_hash(path)}


def load_records() -> dict:
    return (yaml.safe_load(RECORDS.read_text(encoding="utf-8")) or {}) if RECORDS.exists() else {}


def record(per_file: dict, complete: set[str], equivalent: dict[str, str]) -> list[str]:
    """Write the complete files' counts with their source hashes; the files written."""
    records = load_records()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    today = datetime.date.today().isoformat()
    written = []
    for path in sorted(complete):
        killed, counted = per_file.get(path, (0, 0))
        records[path] = {"killed": killed, "counted": counted,
                         "equivalent": sum(module_of(m) == path for m in equivalent),
                         "sha256": source_hash(path), "measured": today, "commit": commit}
        written.append(path)
    RECORDS.write_text("# Per-file mutation scores (scripts/mutation.py --record); a file whose source no longer\n"
                       "# matches its sha256 is stale and must be measured again.\n"
                       + yaml.safe_dump(records, sort_keys=True), encoding="utf-8")
    return written


def recorded_score(records: dict) -> tuple[int, int, list[str], list[str]]:
    """Killed and counted over the fresh records; stale and never-recorded files in scope."""
    killed = counted = 0
    stale, missing = [], []
    for path in scope():
        entry = records.get(path)
        if entry is None:
            missing.append(path)
        elif entry["sha256"] != source_hash(path):
            stale.append(path)
        else:
            killed += entry["killed"]
            counted += entry["counted"]
    return killed, counted, stale, missing


def report_records(records: dict) -> float:
    """Print the recorded per-file scores and the total; the total in percent."""
    killed, counted, stale, missing = recorded_score(records)
    for path in scope():
        entry = records.get(path)
        if entry is not None and path not in stale:
            share = f"{100 * entry['killed'] / entry['counted']:6.1f}%" if entry["counted"] else "     --"
            print(
                f"{path:<40}  {entry['killed']:5d}/{entry['counted']:<5d} {share}  ({entry['measured']}, "
                f"{entry['commit']})"
            )
    total = 100 * killed / max(counted, 1)
    print(f"{'recorded total':<40}  {killed:5d}/{counted:<5d} {total:6.1f}%")
    if stale:
        print(f"stale (source changed since measured): {', '.join(stale)}")
    if missing:
        print(f"never measured: {', '.join(missing)}")
    return total


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
    parser.add_argument("--part", help="run only the mutants of the files under this path (e.g. simcore/models/numa)")
    parser.add_argument("--record", action="store_true",
                        help=f"write the files whose mutants were all tested to {RECORDS.relative_to(ROOT)}")
    parser.add_argument(
        "--save-state",
        action="store_true",
        help=f"only copy mutants/'s exit codes into {STATE.relative_to(ROOT)} (e.g. after a killed run)",
    )
    parser.add_argument("--prune", action="store_true",
                        help="only drop the records that name a file or function the tree no longer has")
    parser.add_argument("mutants", nargs="*", help="run only these mutants (names as mutmut prints them)")
    args = parser.parse_args(argv)
    names = args.mutants + (part_globs(args.part) if args.part else [])
    if args.prune:
        dropped = prune_records()
        print(f"dropped {len(dropped)} records" + "".join(f"\n  {line}" for line in dropped))
        return 0
    if args.save_state:
        print(f"kept in {STATE.relative_to(ROOT)}: {', '.join(save_state()) or 'nothing (no mutants/ here)'}")
        return 0
    if not args.report_only:
        run_mutmut(args.children, names)
    equivalent = equivalents()
    status = statuses() if (ROOT / "mutants").is_dir() else {}
    per_file, survivors, stale = score(status, equivalent)
    if status:
        print("this run:")
        report(per_file, survivors, stale, len(equivalent) - len(stale))
    if args.record:
        written = record(per_file, complete_files(status), equivalent)
        print(f"\nrecorded: {', '.join(written) or 'nothing (no file had all its mutants tested)'}")
    print("\nrecorded per file (tests/mutation-scores.yaml):")
    total = report_records(load_records())
    return 0 if total >= args.fail_under else 1


if __name__ == "__main__":
    sys.exit(main())
