"""Policy registry: balancers are registered by (model, name).

Inside simcore a policy class is decorated with ``@register("cluster", "mosix")``. Other
packages register through the entry-point group ``simcore.policies`` with entries
``"<model>:<name>" = "package.module:Class"``.
"""

from __future__ import annotations

from importlib.metadata import entry_points

_POLICIES: dict[tuple[str, str], type] = {}
_loaded_entry_points = False


def register(model: str, name: str):
    """Class decorator registering a policy under ``name`` for ``model``."""

    def decorate(cls):
        cls.name = name
        _POLICIES[(model, name)] = cls
        return cls

    return decorate


def _load_entry_points() -> None:
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    for ep in entry_points(group="simcore.policies"):
        model, _, name = ep.name.partition(":")
        _POLICIES.setdefault((model, name), ep.load())


def policy_names(model: str) -> list[str]:
    """Registered policy names of ``model`` (the model module must be imported first)."""
    _load_entry_points()
    return sorted(name for (m, name) in _POLICIES if m == model)


def get_policy(model: str, name: str) -> type:
    """The policy class registered as ``name`` for ``model``."""
    _load_entry_points()
    try:
        return _POLICIES[(model, name)]
    except KeyError:
        raise KeyError(name) from None
