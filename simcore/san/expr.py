"""A small, safe expression language for functional rates and measures (no ``eval``).

Grammar, lowest precedence first::

    expr  := and ('or' and)*
    and   := not ('and' not)*
    not   := 'not' not | cmp
    cmp   := sum [('==' | '!=' | '<' | '<=' | '>' | '>=') sum]
    sum   := prod (('+' | '-') prod)*
    prod  := unary (('*' | '/') unary)*
    unary := '-' unary | atom
    atom  := NUMBER | NAME | NAME '(' args ')' | '(' expr ')'

A NAME is a parameter (its value) or an automaton (the 0-based index of its current local state
in the declared list, so a counter automaton with states 0, 1, 2… reads as its count). In a
comparison of an automaton with a name, the name is looked up first among that automaton's
states: ``Cpu1 == Busy``. Functions: ``min(a, b, …)``, ``max(a, b, …)`` and
``count(PATTERN, STATE)``, the number of automata whose name matches the glob PATTERN (``Cpu*``)
and that are in STATE. Comparisons and ``and``/``or``/``not`` give 1.0 or 0.0; non-zero is true.

Expressions are evaluated vectorised: each automaton reads as an array of local state indices,
so one call evaluates the expression over many global states (or, with arrays shaped for
broadcasting, over the product of the automata it depends on).
"""

from __future__ import annotations

import fnmatch
import functools
import operator
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

_TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_]\w*)"
                    r"|(?P<op>==|!=|<=|>=|[-+*/(),<>]))")
_KEYWORDS = {"and", "or", "not"}
_FUNCTIONS = {"min", "max", "count"}
_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": np.divide}
_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


class ExprError(ValueError):
    """An expression that does not parse or names something unknown (the caller adds where)."""


def tokenize(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, position) tokens of ``text``, ending with an ``end`` token."""
    tokens, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if not match:
            bad = text[pos:].lstrip()[0]
            raise ExprError(f"unexpected character '{bad}' at position {text.index(bad, pos)}")
        kind = match.lastgroup
        tokens.append((kind, match.group(kind), match.start(kind)))
        pos = match.end()
    tokens.append(("end", "", len(text)))
    return tokens


class _Parser:
    """Recursive descent over the tokens; builds a tree of tuples."""

    def __init__(self, text: str):
        self.text, self.tokens, self.i = text, tokenize(text), 0

    def peek(self, value: str | None = None) -> bool:
        kind, tok, _ = self.tokens[self.i]
        return tok == value if value is not None else kind != "end"

    def take(self, value: str | None = None) -> tuple[str, str, int]:
        tok = self.tokens[self.i]
        if value is not None and tok[1] != value:
            found = f"'{tok[1]}'" if tok[0] != "end" else "the end"
            raise ExprError(f"expected '{value}' at position {tok[2]}, found {found}")
        self.i += 1
        return tok

    def parse(self):
        if not self.peek():
            raise ExprError("is empty")
        tree = self.or_()
        if self.peek():
            kind, tok, pos = self.tokens[self.i]
            raise ExprError(f"unexpected '{tok}' at position {pos}")
        return tree

    def or_(self):
        tree = self.and_()
        while self.peek("or"):
            self.take()
            tree = ("or", tree, self.and_())
        return tree

    def and_(self):
        tree = self.not_()
        while self.peek("and"):
            self.take()
            tree = ("and", tree, self.not_())
        return tree

    def not_(self):
        if self.peek("not"):
            self.take()
            return ("not", self.not_())
        return self.cmp()

    def cmp(self):
        tree = self.sum()
        if self.tokens[self.i][1] in _CMP:
            op = self.take()[1]
            tree = ("cmp", op, tree, self.sum())
        return tree

    def sum(self):
        tree = self.prod()
        while self.tokens[self.i][1] in ("+", "-"):
            op = self.take()[1]
            tree = ("arith", op, tree, self.prod())
        return tree

    def prod(self):
        tree = self.unary()
        while self.tokens[self.i][1] in ("*", "/"):
            op = self.take()[1]
            tree = ("arith", op, tree, self.unary())
        return tree

    def unary(self):
        if self.peek("-"):
            self.take()
            return ("neg", self.unary())
        return self.atom()

    def atom(self):
        kind, tok, pos = self.take()
        if kind == "num":
            return ("num", float(tok))
        if tok == "(":
            tree = self.or_()
            self.take(")")
            return tree
        if kind == "name" and tok not in _KEYWORDS:
            if self.peek("("):
                return self.call(tok, pos)
            return ("name", tok)
        found = f"'{tok}'" if kind != "end" else "the end"
        raise ExprError(f"expected a number, a name or '(' at position {pos}, found {found}")

    def call(self, func: str, pos: int):
        if func not in _FUNCTIONS:
            raise ExprError(f"unknown function '{func}' at position {pos} (known: count, max, min)")
        self.take("(")
        if func == "count":
            return self.count()
        args = [self.or_()]
        while self.peek(","):
            self.take()
            args.append(self.or_())
        self.take(")")
        return ("call", func, args)

    def count(self):
        start = self.tokens[self.i][2]
        while self.tokens[self.i][1] in ("*",) or self.tokens[self.i][0] in ("name", "num"):
            self.take()
        pattern = self.text[start:self.tokens[self.i][2]].replace(" ", "")
        if not pattern:
            raise ExprError(f"count() needs an automaton name pattern at position {start}")
        self.take(",")
        kind, state, pos = self.take()
        if kind not in ("name", "num"):
            raise ExprError(f"count() needs a state name at position {pos}")
        self.take(")")
        return ("count", pattern, state)


def parse(text: str):
    """The syntax tree of ``text``; raises :class:`ExprError`."""
    if not isinstance(text, str):
        raise ExprError(f"must be a string, not {type(text).__name__}")
    return _Parser(text).parse()


@dataclass(frozen=True)
class Compiled:
    """A resolved expression: ``fn(local)`` with ``local(k)`` the state indices of automaton k."""

    text: str
    fn: Callable
    depends: frozenset[int]

    def __call__(self, local: Callable[[int], np.ndarray]) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.asarray(self.fn(local), dtype=float)


class _Resolver:
    """Turns a tree into a closure, resolving names against automata and parameters."""

    def __init__(self, automata: dict[str, list[str]], params: dict[str, float]):
        self.names = list(automata)
        self.states = [list(s) for s in automata.values()]
        self.params = params

    def automaton(self, tree) -> int | None:
        return self.names.index(tree[1]) if tree[0] == "name" and tree[1] in self.names else None

    def build(self, tree) -> tuple[Callable, frozenset[int]]:
        kind = tree[0]
        if kind == "num":
            value = tree[1]
            return (lambda local: value), frozenset()
        if kind == "name":
            return self.name(tree[1])
        if kind == "neg":
            f, d = self.build(tree[1])
            return (lambda local: -f(local)), d
        if kind in ("arith", "and", "or"):
            op = _ARITH[tree[1]] if kind == "arith" else (np.logical_and if kind == "and" else np.logical_or)
            (f, df), (g, dg) = self.build(tree[-2]), self.build(tree[-1])
            if kind == "arith":
                return (lambda local: op(f(local), g(local))), df | dg
            return (lambda local: op(f(local) != 0, g(local) != 0)), df | dg
        if kind == "not":
            f, d = self.build(tree[1])
            return (lambda local: np.logical_not(f(local) != 0)), d
        if kind == "cmp":
            return self.compare(*tree[1:])
        if kind == "call":
            parts = [self.build(a) for a in tree[2]]
            red = np.minimum if tree[1] == "min" else np.maximum
            fns = [p[0] for p in parts]
            depends = frozenset().union(*(p[1] for p in parts))
            return (lambda local: functools.reduce(red, [f(local) for f in fns])), depends
        return self.count(tree[1], tree[2])

    def name(self, name: str):
        if name in self.params:
            value = float(self.params[name])
            return (lambda local: value), frozenset()
        if name in self.names:
            k = self.names.index(name)
            return (lambda local: local(k)), frozenset([k])
        raise ExprError(f"unknown name '{name}' (not a parameter or an automaton)")

    def compare(self, op: str, left, right):
        fn = _CMP[op]
        for auto, other, flip in ((left, right, False), (right, left, True)):
            k = self.automaton(auto)
            if k is None or other[0] != "name" or self.automaton(other) is not None:
                continue
            if other[1] in self.states[k]:
                index = self.states[k].index(other[1])
            elif other[1] in self.params:
                index = float(self.params[other[1]])
            else:
                raise ExprError(f"unknown state '{other[1]}' of automaton '{self.names[k]}' "
                                f"(states: {', '.join(self.states[k])})")
            if flip:
                return (lambda local: fn(index, local(k))), frozenset([k])
            return (lambda local: fn(local(k), index)), frozenset([k])
        (f, df), (g, dg) = self.build(left), self.build(right)
        return (lambda local: fn(f(local), g(local))), df | dg

    def count(self, pattern: str, state: str):
        matched = [k for k, n in enumerate(self.names) if fnmatch.fnmatchcase(n, pattern)]
        if not matched:
            raise ExprError(f"count(): no automaton matches '{pattern}'")
        pairs = [(k, self.states[k].index(state)) for k in matched if state in self.states[k]]
        if not pairs:
            raise ExprError(f"count(): unknown state '{state}' (no automaton matching '{pattern}' has it)")

        def fn(local):
            return functools.reduce(operator.add, [(local(k) == i).astype(float) for k, i in pairs])
        return fn, frozenset(k for k, _ in pairs)


def compile_expr(text: str, automata: dict[str, list[str]], params: dict[str, float]) -> Compiled:
    """Parse ``text`` and resolve its names; raises :class:`ExprError`."""
    fn, depends = _Resolver(automata, params).build(parse(text))
    return Compiled(text, fn, depends)
