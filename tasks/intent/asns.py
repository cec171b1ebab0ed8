"""AS numbers as an intent writes them: asplain, or asdot in quotes (RFC 5396)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, model_validator

from flatfab.asn import AsnError, parse_asn
from flatfab.intent.base import Kind, Strict
from flatfab.intent.numbers import asn_problem


def _asn_notation(value: Any) -> Any:
    """An AS number written with a dot: asdot text ('1.10', '0.65001') is read as such
    (flatfab.asn); a YAML float (65001.0, or 1.10 unquoted) is refused, never truncated."""
    if isinstance(value, float):
        try:
            return parse_asn(value)  # refuses every float
        except AsnError:
            raise ValueError(f"{value!r} is a YAML number with a decimal point, not an AS "
                             "number; write asplain (65001), or asdot in quotes ('1.10')"
                             ) from None
    if isinstance(value, str) and "." in value:
        try:
            return parse_asn(value)
        except AsnError as exc:
            raise ValueError(str(exc)) from None
    return value


Asn = Annotated[int, BeforeValidator(_asn_notation), Field(ge=1, le=4_294_967_294),
                Kind("AS number")]


class AsnRange(Strict):
    """first..last, each a usable private or public ASN."""

    first: Asn = Field(description="The first ASN of the range.")
    last: Asn = Field(description="The last ASN of the range, at or above `first`.")

    @model_validator(mode="after")
    def _ordered(self) -> AsnRange:
        if self.last < self.first:
            raise ValueError(f"last ({self.last}) is below first ({self.first})")
        why = asn_problem(self.first, self.last)
        if why is not None:
            raise ValueError(why)
        return self

    @property
    def size(self) -> int:
        return self.last - self.first + 1
