"""What every intent model shares."""

from __future__ import annotations

from dataclasses import dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

# IEEE speeds flatfab knows headroom and queue data for, in Mb/s.
SPEEDS_MBPS = {
    "10G": 10_000,
    "25G": 25_000,
    "40G": 40_000,
    "50G": 50_000,
    "100G": 100_000,
    "200G": 200_000,
    "400G": 400_000,
    "800G": 800_000,
}


@dataclass(frozen=True)
class Kind:
    """What a value is, in words ("IPv4 prefix", "AS number"): metadata of an `Annotated`
    type that pydantic ignores and the intent reference prints as the key's type."""

    name: str


def _numeric(annotation: Any) -> bool:
    """Whether a field takes a number and not a boolean (int, float, Optional of them)."""
    if annotation in (int, float):
        return True
    args = get_args(annotation)
    return bool(args) and get_origin(annotation) in (Union, UnionType) and bool not in args \
        and any(a in (int, float) for a in args)


class Strict(BaseModel):
    """Every intent model rejects unknown keys, so a typo is an error, not a silent default."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        # YAML reads yes/no/on/off/true/false as booleans, which pydantic would take as 1/0
        if isinstance(value, bool) and info.field_name is not None:
            field = cls.model_fields.get(info.field_name)
            if field is not None and _numeric(field.annotation):
                raise ValueError(f"{str(value).lower()} is a boolean (YAML reads yes/no/on/"
                                 "off that way); a number belongs here")
        return value
