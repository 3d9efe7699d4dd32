"""IEEE scalar arithmetic for the line-search formulas (Lua gives inf/nan where Python
raises)."""

from __future__ import annotations

import math


def div(a, b):
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * (math.copysign(1.0, b))
    return a / b


def sqrt(a):
    return math.sqrt(a) if a >= 0 else math.nan


def bad(v):
    return math.isnan(v) or math.isinf(v)
