"""Small registries keyed by versioned names ('bm25.v1', 'extractive.v1', ...).

Implementations register a factory under a name; callers build by name. An unknown name
raises an error listing the known ones. Registration happens at import of the module
that defines the implementation; `Registry.populate` imports those modules lazily so a
registry lookup never drags heavy libraries in at `import aqgr` time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Generic, TypeVar

from aqgr.foundation.errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str, modules: tuple[str, ...] = ()):
        self.kind = kind
        self._modules = list(modules)
        self._factories: dict[str, Callable[..., T]] = {}
        self._populated = False

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        def decorate(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._factories and self._factories[name] is not factory:
                raise ValueError(f"{self.kind} {name!r} registered twice")
            self._factories[name] = factory
            return factory

        return decorate

    def add_module(self, module: str) -> None:
        """Declare a module whose import registers implementations (imported on first lookup)."""
        if module not in self._modules:
            self._modules.append(module)
            self._populated = False

    def populate(self) -> None:
        if not self._populated:
            for module in self._modules:
                importlib.import_module(module)
            self._populated = True

    def names(self) -> list[str]:
        self.populate()
        return sorted(self._factories)

    def get(self, name: str) -> Callable[..., T]:
        self.populate()
        try:
            return self._factories[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self.names()) from None

    def create(self, name: str, **kwargs) -> T:
        return self.get(name)(**kwargs)
