"""vtoe's unit suffixes (docs/keys.md) as numbers: "10Gbps" -> 1e10 bit/s, "2.5ms" -> 0.0025 s.

A table column of such text becomes a numeric column named after its unit
(``toe.bandwidth`` -> ``toe.bandwidth_bps``), so that it sorts, plots and compares as numbers.
"""

from __future__ import annotations

import re

# suffix -> (column unit, factor to it); the same suffixes as models/core/units.cpp.
_KI, _MI, _GI, _TI = 1 << 10, 1 << 20, 1 << 30, 1 << 40
SUFFIXES = {
    # time, in seconds
    "s": ("s", 1.0), "ms": ("s", 1e-3), "us": ("s", 1e-6), "ns": ("s", 1e-9), "ps": ("s", 1e-12),
    # frequency, in hertz
    "Hz": ("hz", 1.0), "kHz": ("hz", 1e3), "KHz": ("hz", 1e3), "MHz": ("hz", 1e6),
    "GHz": ("hz", 1e9), "THz": ("hz", 1e12),
    # bandwidth, in bit/s
    "bps": ("bps", 1.0), "kbps": ("bps", 1e3), "Kbps": ("bps", 1e3), "Mbps": ("bps", 1e6),
    "Gbps": ("bps", 1e9), "Tbps": ("bps", 1e12), "bit/s": ("bps", 1.0), "kbit/s": ("bps", 1e3),
    "Mbit/s": ("bps", 1e6), "Gbit/s": ("bps", 1e9), "Tbit/s": ("bps", 1e12),
    "B/s": ("bps", 8.0), "kB/s": ("bps", 8e3), "MB/s": ("bps", 8e6), "GB/s": ("bps", 8e9),
    "KiB/s": ("bps", 8.0 * _KI), "MiB/s": ("bps", 8.0 * _MI), "GiB/s": ("bps", 8.0 * _GI),
    # sizes, in bytes
    "B": ("bytes", 1.0), "kB": ("bytes", 1e3), "MB": ("bytes", 1e6), "GB": ("bytes", 1e9),
    "TB": ("bytes", 1e12), "KiB": ("bytes", _KI), "MiB": ("bytes", _MI), "GiB": ("bytes", _GI),
    "TiB": ("bytes", _TI),
    # ratios
    "%": ("ratio", 0.01),
}
_VALUE_RE = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z%/]+)\s*$")


def parse(text):
    """``(number, unit)`` for text with a unit suffix ("10Gbps" -> (1e10, "bps")), else None."""
    if not isinstance(text, str):
        return None
    m = _VALUE_RE.match(text)
    if not m or m.group(2) not in SUFFIXES:
        return None
    unit, factor = SUFFIXES[m.group(2)]
    return float(m.group(1)) * factor, unit


def numeric(df):
    """A copy of ``df`` where every column of unit text (all its non-empty values parse, in one
    unit) is replaced, in place, by its numbers in a column named ``<column>_<unit>``
    (``toe.bandwidth`` -> ``toe.bandwidth_bps``; ``_s``, ``_hz``, ``_bytes``, ``_ratio``). A bare
    0 among them (zero in any unit) counts as 0. Other columns are left as they are."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    out = df.copy()
    renames = {}
    for col in df.columns:
        if is_numeric_dtype(df[col]) or is_bool_dtype(df[col]):
            continue
        values = [v for v in df[col] if v is not None and v == v]
        parsed = [parse(v) if not (isinstance(v, (int, float)) and v == 0) else (0.0, None)
                  for v in values]
        units = {p[1] for p in parsed if p is not None and p[1] is not None}
        if not values or any(p is None for p in parsed) or len(units) != 1:
            continue
        unit = units.pop()
        out[col] = [None if v is None or v != v else
                    (0.0 if isinstance(v, (int, float)) else parse(v)[0]) for v in df[col]]
        out[col] = out[col].astype("float64")
        renames[col] = f"{col}_{unit}"
    return out.rename(columns=renames)
