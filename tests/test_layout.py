"""The report's layout: the LaTeX log checker, and the generated tables' shape."""

from __future__ import annotations

from simcore.report.layout import MAX_OVERFULL_PT, layout_faults

# A pdflatex log as TeX Live writes it: files opened with '(' and closed with ')', pages shipped
# as '[N]', lines broken at 79 characters, a box's contents after its warning up to a blank line.
LOG = r"""This is pdfTeX, Version 3.141592653-2.6-1.40.26 (TeX Live 2025/dev/Debian) (preloaded format=pdflatex)
(./report.tex
LaTeX2e <2024-11-01> patch level 2
(./sections/mehta.tex [61]
Overfull \hbox ({wide}pt too wide) in paragraph at lines 142--174
[]\T1/ptm/m/it/10 Tables 1--2 and the traces (un-der the same read-ings. \T1/ptm
 []

(./generated/paper-mehta.tex (./tables/mehta-table1-s1-500ms-readings-with-a-na
me-that-wraps.tex
Underfull \hbox (badness 10000) in paragraph at lines 12--12
[]\T1/ptm/m/n/10 text)
 []

LaTeX Warning: Float too large for page by 599.21213pt on input line 198.

) [62] [63 <./figures//mehta-table1.pdf>]))
(./sections/zhou91.tex
Overfull \vbox (2.5pt too high) has occurred while \output is active []

) [64] )
"""


def test_a_92pt_box_and_a_float_too_large_are_faults_named_by_file_line_and_page():
    """Derived by hand from LOG: the 92 pt box sits in sections/mehta.tex lines 142--174, after
    page 61 was shipped (so on page 62); the float warning comes inside the wrapped table file,
    still before [62]; the underfull box and the 2.5 pt vbox (under 5 pt) are no faults."""
    faults = layout_faults(LOG.replace("{wide}", "92.43974"))
    assert faults == [
        "sections/mehta.tex:142--174 (page 62): overfull \\hbox, 92.4 pt too wide",
        "tables/mehta-table1-s1-500ms-readings-with-a-name-that-wraps.tex:198 (page 62): "
        "float too large for the page by 599.2 pt",
    ]


def test_a_box_within_the_threshold_passes():
    """3 pt is below the 5 pt threshold, and the log has no float warning once it is removed."""
    log = LOG.replace("{wide}", "3.0").replace("LaTeX Warning: Float too large", "LaTeX Warning: Reference")
    assert MAX_OVERFULL_PT == 5.0 and layout_faults(log) == []


def test_check_layout_exits_1_naming_each_fault_and_0_on_a_clean_log(tmp_path, simcore_cli):
    bad, good = tmp_path / "bad.log", tmp_path / "good.log"
    bad.write_text(LOG.replace("{wide}", "92.43974"))
    good.write_text(LOG.replace("{wide}", "3.0").replace("Float too large", "Reference"))
    run = simcore_cli("check-layout", bad)
    assert run.returncode == 1
    assert "sections/mehta.tex:142--174 (page 62): overfull \\hbox, 92.4 pt" in run.stderr
    assert "float too large for the page by 599.2 pt" in run.stderr and "2 layout faults" in run.stderr
    run = simcore_cli("check-layout", good)
    assert (run.returncode, run.stderr) == (0, "")


def test_check_layout_of_a_missing_log_is_one_sentence_and_exit_2(tmp_path, simcore_cli):
    run = simcore_cli("check-layout", tmp_path / "none.log")
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "none.log: no such LaTeX log" in run.stderr
