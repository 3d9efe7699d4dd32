"""Configuration modules as PyTorch's (``torch._dynamo.config``, ``torch.compiler.config``).

A config module holds named settings with defaults (some read from environment
variables, some aliases of another module's setting). Reading or writing a name it does
not have raises AttributeError; ``patch`` changes settings for a ``with`` block or a
decorated function; ``get_config_copy``, ``save_config`` and ``load_config`` snapshot
and restore them. As in PyTorch, a value set is held in a context variable, so it is
seen by the thread (or asyncio task) that set it.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import os
import pickle
import unittest
import warnings
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

_UNSET = object()
_IMMUTABLE = (int, float, bool, type(None), str, bytes, frozenset, tuple)


@dataclass
class Config:
    """One setting: its default, the environment variables that set it (``env_default``
    below a user's setting, ``env_force`` above it), or the setting it is an alias of
    (``alias="module.name"``)."""

    default: Any = None
    env_default: tuple[str, ...] = ()
    env_force: tuple[str, ...] = ()
    alias: str | None = None
    deprecation_message: str | None = None
    _override: ContextVar = field(init=False, repr=False)
    _env_default: Any = field(init=False, repr=False, default=_UNSET)
    _env_force: Any = field(init=False, repr=False, default=_UNSET)
    _warned: bool = field(init=False, repr=False, default=False)
    _hidden: bool = field(init=False, repr=False, default=False)


def _read_env(names: tuple[str, ...]):
    for name in names:
        value = os.environ.get(name)
        if value is not None:
            return {"1": True, "0": False}.get(value, value)
    return _UNSET


def install_config_module(module: ModuleType, settings: dict[str, Config]) -> None:
    """Makes ``module`` a config module holding ``settings``."""
    for name, entry in settings.items():
        entry._override = ContextVar(f"{module.__name__}.{name}", default=_UNSET)
        entry._env_default = _read_env(entry.env_default)
        entry._env_force = _read_env(entry.env_force)
    module.__dict__["_config"] = settings
    module.__class__ = ConfigModule


class ConfigModule(ModuleType):
    """A module whose public attributes are settings (see the module's docstring)."""

    _config: dict[str, Config]

    def _entry(self, name: str) -> Config:
        try:
            return self._config[name]
        except KeyError:
            raise AttributeError(f"{self.__name__}.{name} does not exist") from None

    def _warn_deprecated(self, name: str, entry: Config) -> None:
        if entry.deprecation_message is not None and not entry._warned:
            entry._warned = True
            warnings.warn(
                f"{self.__name__}.{name} is deprecated and {entry.deprecation_message}. "
                "It will be removed in a future version of PyTorch.",
                FutureWarning,
                stacklevel=3,
            )

    @staticmethod
    def _alias_target(alias: str) -> tuple[ModuleType, str]:
        module_name, name = alias.rsplit(".", 1)
        module_name = module_name.replace("torch.", "flambeau.", 1)
        return importlib.import_module(module_name), name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        entry = self._entry(name)
        if entry._hidden:
            raise AttributeError(f"{self.__name__}.{name} does not exist")
        self._warn_deprecated(name, entry)
        if entry.alias is not None:
            module, target = self._alias_target(entry.alias)
            return getattr(module, target)
        if entry._env_force is not _UNSET:
            return entry._env_force
        value = entry._override.get()
        if value is not _UNSET:
            return value
        if entry._env_default is not _UNSET:
            return entry._env_default
        if isinstance(entry.default, _IMMUTABLE):
            return entry.default
        # A mutable default (a set, a list) is copied on first read, so editing what was
        # read does not change the default.
        value = copy.deepcopy(entry.default)
        entry._override.set(value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            super().__setattr__(name, value)
            return
        entry = self._entry(name)
        self._warn_deprecated(name, entry)
        if entry.alias is not None:
            module, target = self._alias_target(entry.alias)
            setattr(module, target, value)
        else:
            entry._override.set(value)
            entry._hidden = False

    def __delattr__(self, name: str) -> None:
        if name.startswith("_"):
            super().__delattr__(name)
            return
        # As PyTorch's: the setting reads as absent until set again (unittest.mock.patch
        # deletes, then sets back, the attributes it patches).
        entry = self._entry(name)
        entry._override.set(_UNSET)
        entry._hidden = True

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._config))

    def get_config_copy(self) -> dict[str, Any]:
        """The settings as a dict (aliases and deprecated settings left out).

        >>> import flambeau
        >>> flambeau._dynamo.config.get_config_copy()["recompile_limit"]
        8
        """
        return {
            name: copy.deepcopy(getattr(self, name))
            for name, entry in self._config.items()
            if entry.alias is None and entry.deprecation_message is None and not entry._hidden
        }

    def to_dict(self) -> dict[str, Any]:
        """A copy of the settings (deprecated in PyTorch: use ``get_config_copy``)."""
        warnings.warn(
            "`config.to_dict()` has been deprecated. It no longer changes the underlying "
            "config. use `config.get_config_copy()` instead if you just want a copy of the "
            "config, or config.load_config if you need mutable access",
            FutureWarning,
            stacklevel=2,
        )
        return self.get_config_copy()

    def save_config(self) -> bytes:
        """The settings pickled, for ``load_config``."""
        return pickle.dumps(self.get_config_copy(), protocol=2)

    def load_config(self, maybe_pickled_config: bytes | dict[str, Any]) -> None:
        """Restores settings from ``save_config``'s bytes or ``get_config_copy``'s dict;
        names this module does not have are skipped with a warning."""
        if isinstance(maybe_pickled_config, dict):
            settings = maybe_pickled_config
        else:
            settings = pickle.loads(maybe_pickled_config)
        for name, value in settings.items():
            if name in self._config:
                setattr(self, name, value)
            else:
                warnings.warn(
                    f"key {name} with value {value} is not understood by this config",
                    stacklevel=2,
                )

    def patch(self, arg1=None, arg2=None, **kwargs) -> _ConfigPatch:
        """Changes settings for a ``with`` block or while a decorated function (or
        ``unittest.TestCase`` class) runs: ``patch("name", value)``,
        ``patch({"name": value})`` or ``patch(name=value)``.

        >>> import flambeau
        >>> config = flambeau._dynamo.config
        >>> with config.patch(recompile_limit=64):
        ...     config.recompile_limit
        64
        >>> config.recompile_limit
        8
        """
        if arg1 is not None:
            if arg2 is not None:
                if not isinstance(arg1, str):
                    raise AssertionError(
                        "first argument must be a string when passing 2 positional args to patch"
                    )
                changes = {arg1: arg2}
            else:
                if not isinstance(arg1, dict):
                    raise AssertionError(
                        "first argument must be a dict when passing a single positional arg "
                        "to patch"
                    )
                changes = arg1
            if kwargs:
                raise AssertionError("cannot pass both positional and keyword arguments to patch")
        else:
            if arg2 is not None:
                raise AssertionError(
                    "second positional argument is only valid when first argument is a key string"
                )
            changes = kwargs
        return _ConfigPatch(self, dict(changes))


class _ConfigPatch(contextlib.ContextDecorator):
    def __init__(self, config: ConfigModule, changes: dict[str, Any]) -> None:
        self.config = config
        self.changes = changes
        self._priors: list[dict[str, Any]] = []

    def __enter__(self) -> None:
        prior = {name: getattr(self.config, name) for name in self.changes}
        try:
            for name, value in self.changes.items():
                setattr(self.config, name, value)
        except Exception:
            for name, value in prior.items():
                setattr(self.config, name, value)
            raise
        self._priors.append(prior)

    def __exit__(self, *exc) -> None:
        for name, value in self._priors.pop().items():
            setattr(self.config, name, value)

    def __call__(self, func):
        if isinstance(func, type) and issubclass(func, unittest.TestCase):
            patch = self

            class _Patched(func):
                @classmethod
                def setUpClass(cls) -> None:
                    patch.__enter__()
                    try:
                        super().setUpClass()
                    except Exception:
                        patch.__exit__(None, None, None)
                        raise

                @classmethod
                def tearDownClass(cls) -> None:
                    try:
                        super().tearDownClass()
                    finally:
                        patch.__exit__(None, None, None)

            _Patched.__name__ = func.__name__
            _Patched.__qualname__ = func.__qualname__
            _Patched.__module__ = func.__module__
            return _Patched
        return super().__call__(func)
