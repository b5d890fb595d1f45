"""A Stochastic Automata Network: automata with named local states, local and synchronizing events.

Build one from Python::

    san = San(params={"lam": 1.0, "mu": 2.0})
    san.automaton("Cpu", ["Idle", "Busy"]).automaton("Job", ["Wait", "Done"])
    san.local("Cpu", "Idle", "Busy", Rate("lam * (Job == Wait)"))
    san.sync("finish", 2.0, {"Cpu": [("Busy", "Idle")], "Job": [("Wait", "Done")]})

or from YAML with :func:`load_san` (same structure, see ``docs`` in that function). A rate is a
non-negative finite number or a :class:`Rate`, an expression of :mod:`simcore.san.expr` over the
parameters and the automata's states, evaluated in the global state *before* the event fires.
A synchronizing event fires only when every participant is in one of its from-states; a
participant's transition may carry a routing probability ``(src, dst, p)`` (default 1).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from simcore.errors import InputError
from simcore.inputs import read_yaml
from simcore.san.expr import Compiled, ExprError, compile_expr, parse, tokenize
from simcore.vocabulary.domains import COUNT, AnyOf, Integer, Real, Structured, is_real, show

_NAME = re.compile(r"[A-Za-z_]\w*\Z")
YAML_KEYS = (
    "name",
    "parameters",
    "automata",
    "initial",
    "local",
    "synchronizing",
    "measures",
    "solve",
    "published",
    "fit",
)
GENERATED_KEYS = ("name", "generator", "parameters", "measures", "solve", "published", "fit")
FIT_KEYS = ("parameter", "bounds")
SOLVE_KEYS = ("times", "method", "tol", "krylov_dim", "simulate")


def _counts_per_scale(value) -> str | None:
    ok = isinstance(value, dict) and value and all(isinstance(k, str) and COUNT.admits(v) for k, v in value.items())
    return None if ok else "not a positive integer per scale"


#: The domains of the ``solve`` section's numbers (``times`` and ``method`` are checked where
#: they are read): the tolerance of the error bound or estimate; the Krylov basis (Expokit's m,
#: 30 by default; a basis of a few vectors takes steps too short to reach a horizon, and one above
#: 100 costs memory for nothing); the SimPy cross-check's trajectories, or one count per scale.
SOLVE_DOMAINS = {"tol": Real(gt=0, lt=1), "krylov_dim": Integer(ge=5, le=100),
                 "simulate": AnyOf(COUNT, Structured("positive integer per scale", _counts_per_scale))}


class SanError(InputError):
    """A SAN model that is not valid; the message names the file (or event) and key."""


#: product spaces above this many states are refused (vectors would not fit in memory)
MAX_PRODUCT = 2**31


def check_product(shape: tuple[int, ...], where: str) -> None:
    """Refuse automata of ``shape`` (their numbers of states) whose product space is above
    :data:`MAX_PRODUCT`, from the sizes alone."""
    states = math.prod(shape)
    if states > MAX_PRODUCT:
        raise SanError(f"{where}: automata of {' x '.join(f'{n:,}' for n in shape)} states make a product space of "
                       f"{states:.3g} states, above the limit of {MAX_PRODUCT:.3g}.")


@dataclass(frozen=True)
class Rate:
    """A functional rate: an expression over parameters and automaton states, e.g. ``Rate("mu * (Cpu == Busy)")``."""

    text: str

    def __post_init__(self):
        try:
            parse(self.text)
        except ExprError as err:
            raise SanError(f"Rate '{self.text}': {err}.") from None


@dataclass
class Event:
    """One event: a rate and, per participating automaton, its (src, dst, probability) moves."""

    name: str
    rate: float | Rate
    moves: dict[str, list[tuple[str, str, float]]]
    where: str
    synchronizing: bool


def _finite_number(value) -> bool:
    """A SAN parameter's domain: a finite real (an int counts, a bool does not)."""
    return is_real(value)


@dataclass
class San:
    """A SAN model under construction; every method validates what it is given."""

    params: dict[str, float] = field(default_factory=dict)
    name: str = "san"
    source: str = "<python>"
    automata: dict[str, list[str]] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    start: dict[str, str] = field(default_factory=dict)
    measures: dict[str, str] = field(default_factory=dict)
    solve: dict = field(default_factory=dict)       # a model file's defaults for `simcore san`
    published: dict = field(default_factory=dict)   # the paper's values, for the report
    about: dict = field(default_factory=dict)       # facts of a generated model (its topology, ...)
    _positions: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _event_names: set = field(default_factory=set, init=False, repr=False, compare=False)

    def __post_init__(self):
        for key, value in self.params.items():
            self.param(key, value)
        self._event_names.update(e.name for e in self.events)

    # -- construction -------------------------------------------------------------------------
    def param(self, name: str, value: float, where: str | None = None) -> San:
        """Set parameter ``name`` (a finite number) usable in rate expressions."""
        where = where or f"{self.source}: parameter '{name}'"
        if not isinstance(name, str) or not _NAME.match(name):
            raise SanError(f"{where}: '{name}' is not a valid name (letters, digits, _).")
        if not _finite_number(value):
            raise SanError(f"{where}: must be a finite number, not {value!r}.")
        self.params[name] = float(value)
        return self

    def automaton(self, name: str, states, where: str | None = None) -> San:
        """Add an automaton with its list of distinct local state names (the first is the default initial state)."""
        where = where or f"{self.source}: automaton '{name}'"
        if not isinstance(name, str) or not _NAME.match(name):
            raise SanError(f"{where}: '{name}' is not a valid automaton name (letters, digits, _).")
        if name in self.automata:
            raise SanError(f"{where}: duplicate automaton name '{name}'.")
        if not isinstance(states, (list, tuple)) or not states:
            raise SanError(f"{where}: must list at least one state.")
        check_product((*map(len, self.automata.values()), len(states)), where)
        names = [str(s) for s in states]
        dup = sorted(s for s, n in Counter(names).items() if n > 1)
        if dup:
            raise SanError(f"{where}: duplicate state name '{dup[0]}'.")
        self.automata[name] = names
        return self

    def position(self, auto: str, state) -> int | None:
        """The index of local ``state`` of automaton ``auto`` (None if it has no such state)."""
        if auto not in self._positions:
            self._positions[auto] = {s: i for i, s in enumerate(self.automata[auto])}
        return self._positions[auto].get(str(state))

    def initial(self, states: dict[str, str], where: str | None = None) -> San:
        """Set the initial local state of some automata (the others start in their first state)."""
        where = where or f"{self.source}: initial"
        for auto, state in states.items():
            self._state(where, auto, state)
            self.start[auto] = str(state)
        return self

    def local(self, automaton: str, src: str, dst: str, rate, name: str | None = None,
              where: str | None = None) -> San:
        """Add a local event: ``automaton`` moves from ``src`` to ``dst`` at ``rate``."""
        name = name or f"{automaton}:{src}->{dst}"
        where = where or f"{self.source}: event '{name}'"
        self._state(where, automaton, src)
        self._state(where, automaton, dst)
        event = Event(name, self._rate(where, rate), {automaton: [(str(src), str(dst), 1.0)]}, where, False)
        return self._add(event)

    def sync(self, name: str, rate, moves: dict, where: str | None = None) -> San:
        """Add a synchronizing event: all automata in ``moves`` change together at ``rate``.

        ``moves`` maps each participant to its list of ``(src, dst)`` or ``(src, dst, p)``.
        """
        where = where or f"{self.source}: event '{name}'"
        if not isinstance(moves, dict) or not moves:
            raise SanError(f"{where}: 'transitions' must map at least one automaton to its list of moves.")
        table = {}
        for auto, pairs in moves.items():
            if auto not in self.automata:
                raise SanError(f"{where}: names a missing automaton '{auto}' (known: {', '.join(self.automata)}).")
            table[auto] = self._moves(f"{where} (automaton '{auto}')", auto, pairs)
        return self._add(Event(name, self._rate(where, rate), table, where, True))

    # -- validation helpers -------------------------------------------------------------------
    def _state(self, where: str, auto: str, state) -> None:
        if auto not in self.automata:
            raise SanError(f"{where}: names a missing automaton '{auto}' (known: {', '.join(self.automata)}).")
        if self.position(auto, state) is None:
            raise SanError(f"{where}: unknown state '{state}' of automaton '{auto}' "
                           f"(states: {', '.join(self.automata[auto])}).")

    def _rate(self, where: str, rate):
        if isinstance(rate, Rate):
            return rate
        if isinstance(rate, str):
            return Rate(rate)
        if not _finite_number(rate) or rate < 0:
            raise SanError(f"{where}: rate must be a non-negative finite number or an expression, not {rate!r}.")
        return float(rate)

    def _moves(self, where: str, auto: str, pairs) -> list[tuple[str, str, float]]:
        if not isinstance(pairs, (list, tuple)) or not pairs:
            raise SanError(f"{where}: must list at least one (from, to) move.")
        out, total = [], {}
        for move in pairs:
            if not isinstance(move, (list, tuple)) or len(move) not in (2, 3):
                raise SanError(f"{where}: move {move!r} must be (from, to) or (from, to, probability).")
            src, dst, p = str(move[0]), str(move[1]), move[2] if len(move) == 3 else 1.0
            self._state(where, auto, src)
            self._state(where, auto, dst)
            if not _finite_number(p) or not 0 < p <= 1:
                raise SanError(f"{where}: probability {p!r} of move {src}->{dst} must be in (0, 1].")
            total[src] = total.get(src, 0.0) + p
            if total[src] > 1 + 1e-12:
                raise SanError(f"{where}: probabilities of the moves from '{src}' add up to more than 1.")
            out.append((src, dst, float(p)))
        return out

    def _add(self, event: Event) -> San:
        if event.name in self._event_names:
            raise SanError(f"{event.where}: duplicate event name '{event.name}'.")
        self._event_names.add(event.name)
        self.events.append(event)
        return self

    # -- resolution ---------------------------------------------------------------------------
    def compile(self, text: str, where: str) -> Compiled:
        """Resolve an expression against this model's automata and parameters."""
        try:
            return compile_expr(text, self.automata, self.params)
        except ExprError as err:
            raise SanError(f"{where}: {err}.") from None

    def validate(self) -> None:
        """Check what needs the whole model: rate expressions, measures, names, the initial state."""
        if not self.automata:
            raise SanError(f"{self.source}: key 'automata': the model has no automaton.")
        clash = sorted(set(self.params) & set(self.automata))
        if clash:
            raise SanError(f"{self.source}: key 'parameters': '{clash[0]}' is also an automaton name.")
        for event in self.events:
            if isinstance(event.rate, Rate):
                self.compile(event.rate.text, event.where)
        for name, text in self.measures.items():
            self.compile(text, f"{self.source}: measure '{name}'")

    def pruned(self) -> San:
        """This model without the trailing local states no event can ever enter.

        A state is live if it is initial or the destination of a move whose source is live in an
        event that is not constantly zero and whose every participant has a live source (an
        over-approximation of reachability, so nothing reachable is lost). Only a suffix of each
        automaton's state list is dropped, and never a state named in an expression, so every
        kept state keeps its index and expressions read the same values (e.g. a failure state
        whose rate is 0 leaves the product space). Returns ``self`` when nothing can go.
        """
        live = {a: {self.start.get(a, states[0])} for a, states in self.automata.items()}
        events = [e for e in self.events if isinstance(e.rate, Rate) or e.rate > 0]
        grown = True
        while grown:
            grown = False
            for e in events:
                if not all(any(src in live[a] for src, _, _ in moves) for a, moves in e.moves.items()):
                    continue
                for a, moves in e.moves.items():
                    for src, dst, _ in moves:
                        if src in live[a] and dst not in live[a]:
                            live[a].add(dst)
                            grown = True
        named = self._names_in_expressions()
        keep = {}
        for a, states in self.automata.items():
            last = max(i for i, s in enumerate(states) if s in live[a] or s in named)
            keep[a] = states[:last + 1]
        if all(len(keep[a]) == len(s) for a, s in self.automata.items()):
            return self
        out = San(params=dict(self.params), name=self.name, source=self.source, automata=keep,
                  start=dict(self.start), measures=dict(self.measures))
        for e in self.events:
            moves = {a: [m for m in ms if m[0] in keep[a] and m[1] in keep[a]] for a, ms in e.moves.items()}
            if all(moves.values()):
                out._add(Event(e.name, e.rate, moves, e.where, e.synchronizing))
        return out

    def _names_in_expressions(self) -> set[str]:
        texts = [e.rate.text for e in self.events if isinstance(e.rate, Rate)] + list(self.measures.values())
        return {tok for text in texts for kind, tok, _ in tokenize(text) if kind == "name"}

    def initial_state(self) -> tuple[int, ...]:
        """Local state indices of the initial global state."""
        return tuple(self.position(a, self.start.get(a, states[0])) for a, states in self.automata.items())


# -- YAML --------------------------------------------------------------------------------------
def _mapping(path, key, value) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SanError(f"{path}: key '{key}' must be a mapping.")
    return value


def _items(path, key, value) -> list:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise SanError(f"{path}: key '{key}' must be a list of mappings.")
    return value


def _fields(where: str, item: dict, required: tuple, optional: tuple) -> None:
    for key in required:
        if key not in item:
            raise SanError(f"{where}: key '{key}' is missing.")
    unknown = sorted(set(item) - set(required) - set(optional), key=str)
    if unknown:
        raise SanError(f"{where}: key '{unknown[0]}' is unknown (known: {', '.join(required + optional)}).")


def _yaml_rate(where: str, rate):
    if isinstance(rate, str):
        try:
            return Rate(rate)
        except SanError as err:
            raise SanError(f"{where}: {str(err).split(': ', 1)[1]}") from None
    return rate


def load_san(path: str | Path, scale: str | None = None, params: dict | None = None) -> San:
    """A validated :class:`San` from a YAML file.

    Keys: ``name``; ``parameters`` (name: number); ``automata`` (name: list of states);
    ``initial`` (automaton: state; default the first state); ``local`` (list of ``{automaton,
    from, to, rate[, name]}``); ``synchronizing`` (list of ``{name, rate, transitions:
    {automaton: [[from, to], ...]}}``, a move may add a probability ``[from, to, p]``);
    ``measures`` (name: expression); ``solve`` (defaults for ``simcore san``: ``times``,
    ``method``, ``tol``, ``krylov_dim``, ``simulate``); ``published`` (the paper's values). A
    rate is a number or an expression string. A file with a ``generator`` key instead names a
    model built in Python (:data:`GENERATORS`) with its arguments; ``scale`` picks an argument
    given per scale (``topology: {smoke: a, full: b}``). ``params`` override the file's parameters.
    """
    path = Path(path)
    data = read_yaml(path, SanError)
    if not isinstance(data, dict):
        raise SanError(f"{path}: must be a mapping with keys {', '.join(YAML_KEYS)}.")
    if "generator" in data:
        return _generated(path, data, scale, params or {})
    _fields(str(path), data, ("automata",), tuple(k for k in YAML_KEYS if k != "automata"))
    san = San(name=str(data.get("name", path.stem)), source=str(path))
    san.solve, san.published = (
        _solve(path, data.get("solve"), data.get("fit")),
        _mapping(path, "published", data.get("published")),
    )
    for key, value in {**_mapping(path, "parameters", data.get("parameters")), **(params or {})}.items():
        san.param(str(key), value, f"{path}: key 'parameters.{key}'")
    for key, states in _mapping(path, "automata", data["automata"]).items():
        san.automaton(key, states, f"{path}: key 'automata.{key}'")
    san.initial(_mapping(path, "initial", data.get("initial")), f"{path}: key 'initial'")
    for i, item in enumerate(_items(path, "local", data.get("local"))):
        where = f"{path}: key 'local[{i}]'"
        _fields(where, item, ("automaton", "from", "to", "rate"), ("name",))
        rate = _yaml_rate(f"{path}: key 'local[{i}].rate'", item["rate"])
        san.local(item["automaton"], item["from"], item["to"], rate, item.get("name"), where)
    for i, item in enumerate(_items(path, "synchronizing", data.get("synchronizing"))):
        where = f"{path}: key 'synchronizing[{i}]'"
        _fields(where, item, ("name", "rate", "transitions"), ())
        rate = _yaml_rate(f"{where[:-1]}.rate'", item["rate"])
        san.sync(str(item["name"]), rate, item["transitions"], where)
    for key, text in _mapping(path, "measures", data.get("measures")).items():
        if not isinstance(text, str):
            raise SanError(f"{path}: key 'measures.{key}' must be an expression string.")
        san.measures[str(key)] = text
    _validate_yaml(san, path)
    return san


def _validate_yaml(san: San, path: Path) -> None:
    """Validate, naming YAML keys (rates as ``local[i].rate``) rather than events."""
    for event in san.events:
        if isinstance(event.rate, Rate):
            san.compile(event.rate.text, f"{event.where[:-1]}.rate'")
    for name, text in san.measures.items():
        san.compile(text, f"{path}: key 'measures.{name}'")
    san.validate()


def _solve(path: Path, value, fit=None) -> dict:
    """The ``solve`` section, checked; so is the ``fit`` section (``simcore san-fit``'s arguments) if given."""
    if fit is not None:
        _fields(f"{path}: key 'fit'", _mapping(path, "fit", fit), FIT_KEYS, ())
    solve = _mapping(path, "solve", value)
    _fields(f"{path}: key 'solve'", solve, (), SOLVE_KEYS)
    for key, domain in SOLVE_DOMAINS.items():
        problem = domain.problem(solve[key]) if key in solve else None
        if problem:
            raise SanError(f"{path}: key 'solve.{key}': {show(solve[key])} {problem}.")
    return solve


GENERATORS = {"corr05": "simcore.san.corr05"}


def _generated(path: Path, data: dict, scale: str | None, overrides: dict) -> San:
    """A model file whose SAN is built by a generator module's ``from_spec(args, params, where)``."""
    import importlib

    _fields(str(path), data, ("generator",), tuple(k for k in GENERATED_KEYS if k != "generator"))
    args = dict(_mapping(path, "generator", data["generator"]))
    kind = args.pop("model", None)
    if kind not in GENERATORS:
        raise SanError(f"{path}: key 'generator.model' must be one of {', '.join(GENERATORS)}, not {kind!r}.")
    for key, value in list(args.items()):
        if isinstance(value, dict):
            if scale not in value:
                raise SanError(f"{path}: key 'generator.{key}' is given per scale ({', '.join(value)}); "
                               f"pass one of them (--scale), not {scale!r}.")
            args[key] = value[scale]
    params = {**_mapping(path, "parameters", data.get("parameters")), **overrides}
    san = importlib.import_module(GENERATORS[kind]).from_spec(args, params, str(path))
    san.name, san.source = str(data.get("name", path.stem)), str(path)
    for key, text in _mapping(path, "measures", data.get("measures")).items():
        san.measures[str(key)] = str(text)
    san.solve, san.published = (
        _solve(path, data.get("solve"), data.get("fit")),
        _mapping(path, "published", data.get("published")),
    )
    _validate_yaml(san, path)
    return san
