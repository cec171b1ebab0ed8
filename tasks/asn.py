"""BGP AS numbers in every notation devices and operators write them (RFC 5396).

asplain is the decimal number (``4259971072``); asdot writes an AS above 65535 as
``high.low`` (``65002.2048``) and asdot+ writes every AS that way (``0.65001``). Devices
report either, depending on release and configuration (EOS ``bgp asn notation asdot``).
"""

from __future__ import annotations

import re

MAX_ASN = 4_294_967_295  # 32-bit AS numbers (RFC 6793)
_ASDOT = re.compile(r"(\d{1,5})\.(\d{1,5})")
_ASPLAIN = re.compile(r"\d{1,10}")


class AsnError(ValueError):
    """A value that is not an AS number in any notation; the message says why."""


def parse_asn(value: object) -> int:
    """The AS number `value` denotes (asplain int or text, asdot, asdot+); AsnError if none.

    A bool or a float is refused: YAML reads ``65001.0`` as a float, which is neither
    notation, and silently truncating it would hide a typo.
    """
    if isinstance(value, (bool, float)):
        raise AsnError(f"{value!r} is not an AS number (asplain 65001 or asdot 1.10)")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        dotted = _ASDOT.fullmatch(text)
        if dotted:
            high, low = int(dotted[1]), int(dotted[2])
            if high > 65535 or low > 65535:
                raise AsnError(f"{text!r}: each half of an asdot AS number is at most 65535")
            number = high * 65536 + low
        elif _ASPLAIN.fullmatch(text):
            number = int(text)
        else:
            raise AsnError(f"{text!r} is not an AS number (asplain 65001 or asdot 1.10)")
    else:
        raise AsnError(f"{value!r} is not an AS number (asplain 65001 or asdot 1.10)")
    if not 0 <= number <= MAX_ASN:
        raise AsnError(f"{number} is outside the 32-bit AS number range")
    return number


def read_asn(value: object) -> int | None:
    """The AS number a device reported, or None when the field is absent or unreadable."""
    if value is None or value == "":
        return None
    try:
        return parse_asn(value)
    except AsnError:
        return None


def asdot(number: int) -> str:
    """`number` in asdot notation (plain below 65536, as RFC 5396 asdot does)."""
    return str(number) if number < 65536 else f"{number // 65536}.{number % 65536}"
