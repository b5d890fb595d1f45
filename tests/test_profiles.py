"""The Snakemake profiles: a job-rate window short enough that no call waits long to exit.

Snakemake sleeps out the rest of its ``max-jobs-per-timespan`` window before it exits, so a
window of a minute made every ``make figure`` wait up to a minute after its work was done."""

import re
from pathlib import Path

import pytest
import yaml

PROFILES = sorted((Path(__file__).parents[1] / "workflow" / "profiles").glob("*/config.yaml"))
UNIT = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}


def window_seconds(limit: str) -> float:
    """The window of a ``N/T`` job-rate limit in seconds (``T`` as Snakemake writes it: 10s, 1m)."""
    match = re.fullmatch(r"\d+/(\d*)(ms|s|m|h)", limit)
    assert match, f"not a job-rate limit: {limit!r}"
    return float(match.group(1) or 1) * UNIT[match.group(2)]


def test_the_window_parser_reads_snakemakes_units():
    assert window_seconds("1000/1m") == 60 and window_seconds("1000/10s") == 10 and window_seconds("100/s") == 1


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.parent.name)
def test_no_profile_holds_a_call_more_than_ten_seconds_after_its_work(profile):
    limit = yaml.safe_load(profile.read_text()).get("max-jobs-per-timespan")
    if limit is not None:
        assert window_seconds(str(limit)) <= 10, f"{profile}: max-jobs-per-timespan {limit}"
