"""Reading the YAML files the tool is given (specs, presets, configuration, topologies, SAN models)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from simcore.errors import InputError


class DuplicateKey(yaml.YAMLError):
    """A mapping that gives one key twice: YAML would keep the last value without a word."""

    def __init__(self, key, first: int, second: int):
        super().__init__(f"key '{key}' is given twice in one mapping (lines {first} and {second}); "
                         "YAML would silently keep the last value, so remove one")


# libyaml's parser where PyYAML was built with it (the wheels are): the same documents, ten times faster
_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LOADER(_BASE):
    """Safe loading that refuses a key given twice in one mapping (merge keys ``<<`` excepted)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node)
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise DuplicateKey(key, seen[key], line)
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def load_yaml_text(text: str) -> Any:
    """The YAML document in ``text``, with :data:`LOADER` (duplicate keys refused)."""
    return yaml.load(text, Loader=LOADER)


def read_yaml(path: str | Path, error: type[InputError] = InputError) -> Any:
    """The YAML document in ``path``; a file that cannot be read, is not UTF-8 text, is not
    valid YAML or gives a key twice raises ``error`` with one sentence naming the file."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as err:
        raise error(f"{path}: cannot be read ({err.strerror or err}).") from None
    except UnicodeDecodeError as err:
        raise error(f"{path}: is not UTF-8 text (byte {err.start} is {err.object[err.start]:#04x}).") from None
    try:
        return load_yaml_text(text)
    except DuplicateKey as err:
        raise error(f"{path}: {err}.") from None
    except yaml.YAMLError as err:
        raise error(f"{path}: is not valid YAML ({str(err).splitlines()[0]}).") from None
    except RecursionError:
        raise error(f"{path}: is not valid YAML (nested too deeply).") from None
