"""The Makefile's verbs: no verb removes a committed file, and only `make reference` writes the
committed reference (`results/reference/`)."""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs import tracked_files

from simcore.cli import OUTPUT_OPTIONS

ROOT = Path(__file__).resolve().parents[1]
# the test's own virtualenv and no stamp to compare: make never builds or installs anything
VENV_ARGS = (f"VENV={Path(sys.executable).parent.parent}", "STAMP=")
REFERENCE = "results/reference"
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "{", "}"}
REMOVERS = {"rm", "rmdir", "unlink"}
WRITE_OPTIONS = {f"--{name.replace('_', '-')}" for name in OUTPUT_OPTIONS} | {">", ">>", "-o"}


def verbs() -> list[str]:
    """The Makefile's targets: its .PHONY line and the targets its help lists (``##``)."""
    text = (ROOT / "Makefile").read_text()
    phony = re.search(r"^\.PHONY:(.*)$", text, re.M).group(1).split()
    return sorted(set(phony) | set(re.findall(r"^([a-z-]+):.*##", text, re.M)))


def dry_run(target: str) -> list[str]:
    """The shell lines `make -n TARGET` would run (continuation lines joined)."""
    ident = "ID=corr05-control" if target == "calibrate" else "ID=amir-table2"   # a calibration, an experiment
    proc = subprocess.run(["make", "-n", "--no-print-directory", "-C", str(ROOT), target, ident,
                           *VENV_ARGS], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (target, proc.stderr)
    return proc.stdout.replace("\\\n", " ").splitlines()


def simple_commands(line: str):
    """(folder it runs in, words) of every simple command of a shell line, following ``cd``."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    here, words = ROOT, []
    for token in [*lexer, ";"]:
        if token not in SEPARATORS:
            words.append(token)
            continue
        if words[:1] == ["cd"] and len(words) == 2:
            here = Path(os.path.normpath(here / words[1]))
        elif words:
            yield here, words
        words = []


def relative(here: Path, operand: str) -> str | None:
    """``operand`` (a path or a glob) relative to the repository; None outside it."""
    assert not set("$`~") & set(operand), f"cannot check the operand {operand!r}"
    rel = os.path.relpath(os.path.normpath(here / operand), ROOT)
    return None if rel == ".." or rel.startswith("../") else rel


def hits(pattern: str, files: list[str]) -> list[str]:
    """The files that a path or glob removes with everything under it: a file matches when its
    first components match the pattern's, one by one (a shell glob never crosses a '/')."""
    parts = [] if pattern == "." else pattern.split("/")
    return [f for f in files if len(f.split("/")) >= len(parts)
            and all(fnmatch.fnmatchcase(c, p) for c, p in zip(f.split("/"), parts))]


def test_the_glob_check_sees_what_rm_would_remove():
    """By hand: `rm -rf results/*/` removes results/reference/x.csv (its first two components
    match); results/raw and a file named like the folder elsewhere are not hit."""
    files = ["results/reference/x.csv", "paper/report.tex", "resultsx/reference"]
    assert hits("results/*", files) == ["results/reference/x.csv"]
    assert hits("results/raw", files) == [] and hits(".", files) == files
    assert [(str(h.relative_to(ROOT)), w) for h, w in simple_commands("cd build/x && rm -f a; tail b || { rm c; }")] \
        == [("build/x", ["rm", "-f", "a"]), ("build/x", ["tail", "b"]), ("build/x", ["rm", "c"])]


@pytest.mark.parametrize("target", verbs())
def test_no_verb_removes_a_committed_file_and_only_reference_writes_the_reference(target):
    """Every command `make -n TARGET` prints: the operands of rm (globs expanded against the
    committed files) hit none of them; outside `make reference`, no command saves a reference
    or writes (an output option, a redirection) into results/reference/."""
    files = [str(p.relative_to(ROOT)) for p in tracked_files()]
    for line in dry_run(target):
        for here, words in simple_commands(line):
            program = Path(words[0]).name
            assert not (program == "find" and {"-delete", "-exec"} & set(words)), f"{target}: cannot check {line}"
            if program in REMOVERS:
                for operand in (w for w in words[1:] if not w.startswith("-")):
                    rel = relative(here, operand)
                    assert rel is None or not hits(rel, files), f"make {target} removes {hits(rel, files)[:3]}: {line}"
            if target == "reference":
                continue
            assert "save-reference" not in words, f"make {target} saves a reference: {line}"
            written = [relative(here, b) for a, b in zip(words, words[1:]) if a in WRITE_OPTIONS]
            assert not [w for w in written if w and (w + "/").startswith(REFERENCE + "/")], \
                f"make {target} writes into {REFERENCE}: {line}"


def test_every_verb_is_checked():
    """The list the test runs over is the Makefile's: the verbs the README names among them."""
    assert {"clean", "distclean", "reference", "reproduce", "figure", "evaluate"} <= set(verbs())


@pytest.mark.parametrize("args, named", [
    (("figure", "ID=amir-table2", "SCALE=huge"), "SCALE=huge is not a scale: give smoke, quick or full"),
    (("reproduce", "SCALE=huge"), "SCALE=huge is not a scale"),
    (("dag", "SCALE=huge"), "SCALE=huge is not a scale"),
    (("unlock", "SCALE=Full"), "SCALE=Full is not a scale"),
    (("dag", "CORES=0"), "CORES=0 is not a number of cores"),   # made `make reproduce` wait forever
    (("reproduce", "CORES=two"), "CORES=two is not a number of cores"),
    (("evaluate", "EVAL_SCALE=full"), "EVAL_SCALE=full is not a scale of make evaluate: give smoke or quick"),
    (("figure",), "make figure: give ID=<experiment id>"),
    (("figure", "ID=amir-tabel2"), "'amir-tabel2' is no experiment"),
])
def test_a_bad_argument_stops_make_with_one_sentence_before_anything_runs(args, named):
    """One line on stderr naming the argument (and what it may be), exit code 2, nothing on
    stdout: neither Snakemake nor TeX nor the virtualenv's build has started."""
    proc = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(ROOT), *args, *VENV_ARGS],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and named in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_report_from_reference_announces_each_long_step_on_stderr():
    """The tables and figures (a minute; simcore's own progress lines count them) and latexmk:
    each is preceded by a line on stderr naming it, N/2. They ran without a word."""
    lines = dry_run("report-from-reference")
    steps = [k for k, line in enumerate(lines)
             if not line.startswith("echo") and (" report-from-results " in line or "latexmk " in line)]
    assert len(steps) == 2
    for n, k in enumerate(steps, 1):
        assert lines[k - 1].startswith(f'echo "make report-from-reference: {n}/2 ') and lines[k - 1].endswith(">&2")
