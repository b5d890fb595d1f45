"""Policy registry: balancers are registered by (model, name).

Inside simcore a policy class is decorated with ``@register("cluster", "mosix")``. Other
packages register through the entry-point group ``simcore.policies`` with entries
``"<model>:<name>" = "package.module:Class"``.

A policy class declares its own hyperparameters as ``HYPERPARAMETERS`` (name ->
:class:`simcore.models.Parameter`: default, meaning, domain), reads them with
:func:`simcore.models.select` and so refuses a bad value with an InputError when it is built.
Its model lists them among its parameters (:func:`hyperparameters`), so specs set them as any other.
"""

from __future__ import annotations

from importlib.metadata import entry_points

_POLICIES: dict[tuple[str, str], type] = {}
_PARAMETERS: dict[str, dict] = {}  # model -> its PARAMETERS, once the model is imported
_loaded_entry_points = False


def register(model: str, name: str):
    """Class decorator registering a policy under ``name`` for ``model``."""

    def decorate(cls):
        cls.name = name
        _POLICIES[(model, name)] = cls
        if model in _PARAMETERS:  # registered after its model: the model learns its hyperparameters
            _merge(_PARAMETERS[model], model, name, cls)
        return cls

    return decorate


def _merge(into: dict, model: str, name: str, cls: type) -> None:
    for key, param in getattr(cls, "HYPERPARAMETERS", {}).items():
        if into.setdefault(key, param) != param:
            raise TypeError(f"policy {name!r} of model {model!r} redeclares parameter {key!r} differently")


def _load_entry_points() -> None:
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    for ep in entry_points(group="simcore.policies"):
        model, _, name = ep.name.partition(":")
        if (model, name) not in _POLICIES:  # registered as if decorated: its name, its hyperparameters
            register(model, name)(ep.load())


def policy_names(model: str) -> list[str]:
    """Registered policy names of ``model`` (the model module must be imported first)."""
    _load_entry_points()
    return sorted(name for (m, name) in _POLICIES if m == model)


def get_policy(model: str, name: str) -> type:
    """The policy class registered as ``name`` for ``model``; an unknown name is bad input."""
    _load_entry_points()
    try:
        return _POLICIES[(model, name)]
    except KeyError:
        from simcore.errors import InputError

        known = ", ".join(policy_names(model)) or "none"
        raise InputError(f"{model} model: unknown policy {name!r} (known: {known})") from None


def with_hyperparameters(model: str, parameters: dict) -> dict:
    """``parameters`` (the model's own) extended by the hyperparameters its registered policies
    declare, in registration order, and by those of policies registered later (an entry point, a
    test): the model's ``PARAMETERS``. A name declared twice must have one declaration."""
    for (m, name), cls in list(_POLICIES.items()):
        if m == model:
            _merge(parameters, model, name, cls)
    _PARAMETERS[model] = parameters
    return parameters


def users(model: str, key: str) -> list[str]:
    """The registered policies of ``model`` that declare hyperparameter ``key``."""
    return [name for (m, name), cls in _POLICIES.items() if m == model and key in getattr(cls, "HYPERPARAMETERS", {})]
