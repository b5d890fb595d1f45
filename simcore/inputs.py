"""Reading the YAML files the tool is given (specs, presets, configuration, topologies, SAN models)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from simcore.errors import InputError

# libyaml's parser where PyYAML was built with it (the wheels are): the same documents, ten times faster
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path: str | Path, error: type[InputError] = InputError) -> Any:
    """The YAML document in ``path``; a file that cannot be read, is not UTF-8 text or is not
    valid YAML raises ``error`` with one sentence naming the file."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as err:
        raise error(f"{path}: cannot be read ({err.strerror or err}).") from None
    except UnicodeDecodeError as err:
        raise error(f"{path}: is not UTF-8 text (byte {err.start} is {err.object[err.start]:#04x}).") from None
    try:
        return yaml.load(text, Loader=LOADER)
    except yaml.YAMLError as err:
        raise error(f"{path}: is not valid YAML ({str(err).splitlines()[0]}).") from None
    except RecursionError:
        raise error(f"{path}: is not valid YAML (nested too deeply).") from None
