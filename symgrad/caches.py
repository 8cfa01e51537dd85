"""The one cache policy of compiled code and traced structures: keep the most recently used, up to a limit.

sg.compile's signatures, the structures the uncompiled transforms compile, the eager adjoints, the captured
steps and the eager call plans all keep their entries in a `Recent`, so they age and are forgotten the same way.
"""
from __future__ import annotations

import collections
import math

_MISSING = object()


class Recent(collections.OrderedDict):
    """A dict of at most `limit` entries, oldest first. `used` reads an entry and makes it the newest, `keep`
    stores one as the newest and forgets the oldest beyond the limit. Plain `get` reads without reordering, at a
    dict's speed, for lookups made on every recorded op (symgrad.eager.plans)."""

    __slots__ = ("limit",)

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def used(self, key, default=None):
        """The entry of `key`, now the newest, or `default` (the order unchanged) when there is none."""
        value = self.get(key, _MISSING)
        if value is _MISSING:
            return default
        try:
            self.move_to_end(key)
        except KeyError:  # another thread forgot it meanwhile (the caches' hits take no lock)
            pass
        return value

    def keep(self, key, value, evicted=None):
        """Store `value` as the newest entry and return it; the oldest entries beyond the limit are forgotten,
        each handed to `evicted(key, value)` when given (a caller's clean-up: code freed, a shortcut dropped)."""
        self[key] = value
        try:
            self.move_to_end(key)
        except KeyError:  # another thread's keep forgot it already (many new entries at once, no lock)
            pass
        while len(self) > self.limit:
            try:
                old = self.popitem(last=False)
            except KeyError:  # another thread emptied it meanwhile
                break
            if evicted is not None:
                evicted(*old)
        return value


def scalar_token(value):
    """What tells a Python value apart in a cache key besides equality: its type (1 == 1.0 == True) and a float zero's
    sign (-0.0 == 0.0, yet sg.pad(x, 1, constant_values=-0.0) is not sg.pad(x, 1, constant_values=0.0))."""
    kind = type(value)
    return (kind, math.copysign(1.0, value)) if kind is float and value == 0 else kind
