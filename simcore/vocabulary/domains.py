"""The values a parameter may take: a small vocabulary of domains.

A domain says what it admits (``describe()``: "positive real", "integer in [-20, 19]",
"'home', 'random' or 'round-robin'") and why a value is not admitted (``problem(value)``: None
when it is, else the end of a sentence such as "is not a positive real"). Reals are always
finite: NaN and infinities are outside every domain. ``True`` and ``False`` are booleans, never
numbers. NumPy scalars count as the Python numbers they stand for.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable


class Domain:
    """What a parameter admits; subclasses define ``describe`` and ``admits``."""

    def describe(self) -> str:
        raise NotImplementedError

    def admits(self, value: Any) -> bool:
        raise NotImplementedError

    def phrase(self) -> str:
        """``describe()`` as used after 'is not': with an article where it names a kind of thing."""
        return self.describe()

    def problem(self, value: Any) -> str | None:
        """None if ``value`` is admitted, else e.g. 'is not a positive real'."""
        return None if self.admits(value) else f"is not {self.phrase()}"


def _either(names: list[str]) -> str:
    """'a', 'a or b', 'a, b or c'."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _article(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def is_real(value: Any) -> bool:
    """A finite int or float (NumPy scalars included), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def is_integer(value: Any) -> bool:
    """An int (NumPy integers included), not a bool and not a float."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass(frozen=True)
class _Bounded(Domain):
    """Numbers within optional bounds: ``gt``/``ge`` below, ``lt``/``le`` above."""

    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None

    noun = "number"

    def _number(self, value: Any) -> bool:
        raise NotImplementedError

    def admits(self, value: Any) -> bool:
        if not self._number(value):
            return False
        return ((self.gt is None or value > self.gt) and (self.ge is None or value >= self.ge)
                and (self.lt is None or value < self.lt) and (self.le is None or value <= self.le))

    def describe(self) -> str:
        low = ("(", self.gt) if self.gt is not None else ("[", self.ge) if self.ge is not None else None
        high = (")", self.lt) if self.lt is not None else ("]", self.le) if self.le is not None else None
        if high is None and low in (("(", 0), ("[", 0)):
            return ("positive " if low[0] == "(" else "non-negative ") + self.noun
        if high is None and low == ("[", 1) and self.noun == "integer":
            return "positive integer"
        if low and high:
            return f"{self.noun} in {low[0]}{_num(low[1])}, {_num(high[1])}{high[0]}"
        if low:
            return f"{self.noun} {'>' if low[0] == '(' else '>='} {_num(low[1])}"
        if high:
            return f"{self.noun} {'<' if high[0] == ')' else '<='} {_num(high[1])}"
        return ("finite " if self.noun == "real" else "") + self.noun

    def phrase(self) -> str:
        return _article(self.describe())


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


@dataclass(frozen=True)
class Real(_Bounded):
    """A finite real number (an int is a real; a bool is not), within the bounds given."""

    noun = "real"

    def _number(self, value: Any) -> bool:
        return is_real(value)


@dataclass(frozen=True)
class Integer(_Bounded):
    """An integer (not a bool, not a float such as 2.0), within the bounds given."""

    noun = "integer"

    def _number(self, value: Any) -> bool:
        return is_integer(value)


class _Listed(Domain):
    """A domain built from a list of items (``Choice(*values)``, ``AnyOf(*domains)``), compared by them."""

    def __init__(self, *items: Any):
        self.items = items

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self.items == other.items

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.items))


class Choice(_Listed):
    """One of the listed values (strings, or None for 'null'), matched with their type."""

    @property
    def values(self) -> tuple:
        return self.items

    def admits(self, value: Any) -> bool:
        return any(type(value) is type(v) and value == v for v in self.values)

    def names(self) -> list[str]:
        return ["null" if v is None else repr(v) for v in self.values]

    def describe(self) -> str:
        return _either(self.names())


@dataclass(frozen=True)
class Boolean(Domain):
    """True or False (not 1 or 0, not 'yes')."""

    def admits(self, value: Any) -> bool:
        return isinstance(value, bool)

    def describe(self) -> str:
        return "true or false"


@dataclass(frozen=True)
class Text(Domain):
    """A non-empty string."""

    def admits(self, value: Any) -> bool:
        return isinstance(value, str) and bool(value.strip())

    def describe(self) -> str:
        return "non-empty string"

    def phrase(self) -> str:
        return _article(self.describe())


class AnyOf(_Listed):
    """A value admitted by one of several domains, e.g. ``AnyOf(Choice('n'), Real(gt=1))``."""

    @property
    def options(self) -> tuple:
        return self.items

    def admits(self, value: Any) -> bool:
        return any(d.admits(value) for d in self.options)

    def describe(self) -> str:
        return _either([n for d in self.options for n in (d.names() if isinstance(d, Choice) else [d.phrase()])])


@dataclass(frozen=True)
class Structured(Domain):
    """A structured value checked by ``check(value) -> problem or None``, described in words."""

    text: str
    check: Callable[[Any], str | None]

    def admits(self, value: Any) -> bool:
        return self.check(value) is None

    def describe(self) -> str:
        return self.text

    def phrase(self) -> str:
        return _article(self.text)

    def problem(self, value: Any) -> str | None:
        detail = self.check(value)
        return None if detail is None else f"is not {self.phrase()} ({detail})"


def records(fields: dict[str, tuple[Domain, bool]]) -> Callable[[Any], str | None]:
    """A ``Structured`` check of a non-empty list of mappings with the given ``{key: (domain,
    required)}`` fields, e.g. a cluster's machine groups."""

    def check(value: Any) -> str | None:
        if not isinstance(value, (list, tuple)) or not value:
            return "not a non-empty list"
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                return f"item {i} is not a mapping"
            unknown = sorted(set(item) - set(fields), key=str)
            if unknown:
                return f"item {i} has unknown key {unknown[0]!r} (known: {', '.join(fields)})"
            for key, (domain, required) in fields.items():
                if key not in item:
                    if required:
                        return f"item {i} has no key {key!r}"
                    continue
                problem = domain.problem(item[key])
                if problem:
                    return f"item {i}: {key} = {show(item[key])} {problem}"
        return None

    return check


POSITIVE = Real(gt=0)
NONNEGATIVE = Real(ge=0)
PROBABILITY = Real(ge=0, le=1)
FINITE = Real()
BOOLEAN = Boolean()
TEXT = Text()
COUNT = Integer(ge=1)          # a number of things, at least one
NONNEGATIVE_INTEGER = Integer(ge=0)


def show(value: Any, width: int = 60) -> str:
    """``repr(value)``, cut to about ``width`` characters."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
