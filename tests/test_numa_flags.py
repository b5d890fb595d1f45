"""How a sched domain's ``flags`` are read (balancer.has_flag): every accepted form, by definition.

Forms (docs/linux26-scheduler.md, "Domain flags"): no flags at all (None: every flag holds, the
simulator's default), an int bit mask with the kernel's 2.6.12 bits (``_FLAG_BITS``), a string of
names separated by '|', ',' or white space, or a collection of names (set, frozenset, list).
Names are case-insensitive and may carry the kernel's ``SD_`` prefix; the balancing flags have
short aliases: LOAD_BALANCE = LB, BALANCE_NEWIDLE = NEWIDLE = NI, BALANCE_EXEC = EXEC = EX. Any
other flag is known by its own name only. ``tests/conftest.py`` clears the answer cache before
each test.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from simcore.models.numa import balancer
from simcore.models.numa.balancer import _FLAG_BITS, has_flag

LB, NI, EX = "LOAD_BALANCE", "BALANCE_NEWIDLE", "BALANCE_EXEC"
NAMES = (LB, NI, EX, "WAKE_AFFINE")


def d(flags):
    return SimpleNamespace(flags=flags)


def test_a_domain_without_flags_has_every_flag():
    """No ``flags`` attribute, or flags None: every flag holds."""
    for name in NAMES:
        assert has_flag(object(), name) is True
        assert has_flag(d(None), name) is True


@pytest.mark.parametrize("name", sorted(_FLAG_BITS))
def test_an_int_mask_holds_exactly_the_flags_whose_bit_is_set(name):
    bit = _FLAG_BITS[name]
    everything = sum(_FLAG_BITS.values())
    assert has_flag(d(bit), name) is True
    assert has_flag(d(everything), name) is True
    assert has_flag(d(everything & ~bit), name) is False
    assert has_flag(d(0), name) is False


# (flags, the names among NAMES that they hold)
STRINGS = [
    ("LOAD_BALANCE|BALANCE_NEWIDLE", {LB, NI}),
    ("LOAD_BALANCE,BALANCE_EXEC", {LB, EX}),
    ("BALANCE_EXEC,LOAD_BALANCE", {LB, EX}),
    ("SD_LOAD_BALANCE, NI", {LB, NI}),
    ("NI ,SD_LOAD_BALANCE", {LB, NI}),
    ("LB|NI|EX", {LB, NI, EX}),
    ("lb,ni", {LB, NI}),
    ("sd_load_balance|sd_balance_newidle", {LB, NI}),
    ("Sd_Balance_Exec", {EX}),
    ("SD_LOAD_BALANCE", {LB}),
    ("LB", {LB}),
    ("lb", {LB}),
    ("NEWIDLE", {NI}),
    ("newidle", {NI}),
    ("NI", {NI}),
    ("ni", {NI}),
    ("EXEC", {EX}),
    ("exec", {EX}),
    ("EX", {EX}),
    ("ex", {EX}),
    ("LOAD_BALANCE BALANCE_NEWIDLE", {LB, NI}),
    ("  load_balance \t wake_affine ", {LB, "WAKE_AFFINE"}),
    ("WAKE_AFFINE|SD_WAKE_AFFINE", {"WAKE_AFFINE"}),
    ("SD_", set()),
    ("LOAD_BALANCEX|XBALANCE_NEWIDLE", set()),
    ("", set()),
    ("BALANCE", set()),
    ("SD_SD_LOAD_BALANCE", set()),        # one prefix only
    ("LOAD_BALANCE_SD", set()),           # a prefix, not a suffix
]


@pytest.mark.parametrize("flags, holds", STRINGS)
def test_a_string_holds_its_named_flags(flags, holds):
    for name in NAMES:
        assert has_flag(d(flags), name) is (name in holds), name


@pytest.mark.parametrize("kind", [set, frozenset, list, tuple])
@pytest.mark.parametrize("names, holds", [
    (["LOAD_BALANCE", "BALANCE_NEWIDLE"], {LB, NI}),
    (["SD_LOAD_BALANCE"], {LB}),
    (["lb", "ex"], {LB, EX}),
    (["LB"], {LB}),
    (["NEWIDLE"], {NI}),
    (["ni"], {NI}),
    (["EXEC"], {EX}),
    (["EX"], {EX}),
    (["sd_wake_affine"], {"WAKE_AFFINE"}),
    (["BALANCE_EXEC", "wake_affine"], {EX, "WAKE_AFFINE"}),
    ([], set()),
    (["LOAD_BALANCE|BALANCE_NEWIDLE"], set()),   # a collection's items are names, not split
])
def test_a_collection_holds_its_named_flags(kind, names, holds):
    for name in NAMES:
        assert has_flag(d(kind(names)), name) is (name in holds), name


def test_a_name_outside_the_alias_table_is_known_by_its_own_name_only():
    assert has_flag(d("WAKE_BALANCE"), "WAKE_BALANCE") is True
    assert has_flag(d(["WAKE_BALANCE"]), "WAKE_BALANCE") is True
    assert has_flag(d(frozenset({"SD_SHARE_CPUPOWER"})), "SHARE_CPUPOWER") is True
    assert has_flag(d("WAKE"), "WAKE_BALANCE") is False
    assert has_flag(d(["LB", "NI", "EX"]), "WAKE_BALANCE") is False


def test_answers_are_kept_for_hashable_flags_and_the_same_on_a_second_call():
    for flags in (3, "LB|NI", frozenset({"LB"})):
        first = [has_flag(d(flags), name) for name in NAMES]
        assert [has_flag(d(flags), name) for name in NAMES] == first
        assert all((type(flags), flags, name) in balancer._FLAG_CACHE for name in NAMES)


def test_the_cache_keeps_one_answer_per_name():
    assert has_flag(d(1), LB) is True
    assert has_flag(d(1), NI) is False
    assert has_flag(d("NI"), NI) is True
    assert has_flag(d("NI"), LB) is False
    assert has_flag(d(1), LB) is True and has_flag(d("NI"), LB) is False


def test_equal_flags_of_different_types_do_not_share_an_answer():
    """The int 1 (bit of LOAD_BALANCE) and the string "1" (the name "1", no flag) differ; the
    float 1.0 equals the int 1 and hashes alike, but is no accepted form: it is refused even
    after the int's answer is kept (the cache key holds the type)."""
    assert has_flag(d(1), LB) is True
    assert has_flag(d("1"), LB) is False
    assert has_flag(d(1), LB) is True
    with pytest.raises(TypeError):
        has_flag(d(1.0), LB)


def test_unhashable_flags_are_read_each_time_and_not_kept():
    flags = ["NI"]
    assert has_flag(d(flags), LB) is False
    assert has_flag(d(flags), NI) is True
    flags.append("LB")                      # the same list, changed: read anew
    assert has_flag(d(flags), LB) is True
    assert has_flag(d({"EX"}), EX) is True
    assert has_flag(d({"EX"}), LB) is False
    assert balancer._FLAG_CACHE == {}
