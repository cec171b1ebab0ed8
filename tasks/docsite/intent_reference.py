"""The intent reference: every key of intents/<fabric>/*.yaml, from the intent models.

Each file's model, and every model nested in it, is one section listing its keys with their
type (constraints included), default and description (the `Field(description=...)` of the
model). A model used at several key paths (an override's `ecn` is `ecn.default`'s kind) is
one section naming every path.
"""

from __future__ import annotations

import enum
import inspect
import re
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from flatfab.docsite.markdown import anchor, code, prose, table
from flatfab.intent.base import Kind
from flatfab.intent.loader import INTENT_FILES

_BASES: dict[Any, str] = {int: "integer", float: "number", str: "string", bool: "boolean"}


@dataclass
class Section:
    """One model's section: the (file, key path) pairs it is found at, first seen first;
    a file's own model has the key path ""."""

    model: type[BaseModel]
    paths: list[tuple[str, str]] = field(default_factory=list)

    @property
    def title(self) -> str:
        file, path = self.paths[0]
        return f"{file}: {path}" if path else file

    @property
    def id(self) -> str:
        return anchor(self.title)

    def others(self) -> list[str]:
        return [f"{file}: {path}" for file, path in self.paths[1:]]


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The models an annotation holds, with the shape around each (list item, map value)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in get_args(annotation):
        yield from _models_in(arg)


def _child_path(path: str, key: str, annotation: Any) -> str:
    """The key path of a nested model: `key`, then `[]` per list and `.<key>` per map."""
    here = f"{path}.{key}" if path else key
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            annotation = next(a for a in get_args(annotation) if a is not type(None))
        elif origin is list:
            here, annotation = f"{here}[]", get_args(annotation)[0]
        elif origin is dict:
            here, annotation = f"{here}.<key>", get_args(annotation)[1]
        else:
            return here


def sections() -> list[Section]:
    """Every model of the intent files, each once, in the order a reader meets them."""
    found: dict[type[BaseModel], Section] = {}

    def visit(model: type[BaseModel], file: str, path: str) -> None:
        section = found.get(model)
        if section is not None:
            section.paths.append((file, path))
            return
        found[model] = Section(model, [(file, path)])
        for name, info in model.model_fields.items():
            for child in _models_in(info.annotation):
                visit(child, file, _child_path(path, info.alias or name, info.annotation))

    for stem, (model, _) in INTENT_FILES.items():
        visit(model, f"{stem}.yaml", "")
    return list(found.values())


def _constraints(metadata: list[Any]) -> list[str]:
    found = []
    low: Any = None
    high: Any = None
    for item in metadata:
        if isinstance(item, FieldInfo):
            found += _constraints(item.metadata)
        elif isinstance(item, annotated_types.Ge):
            low = item.ge
        elif isinstance(item, annotated_types.Gt):
            found.append(f"above {_number(item.gt)}")
        elif isinstance(item, annotated_types.Le):
            high = item.le
        elif isinstance(item, annotated_types.MinLen):
            found.append(f"at least {item.min_length}")
        elif getattr(item, "pattern", None):
            found.append(f"matching {code(item.pattern)}")
    if low is not None and high is not None:
        found.insert(0, f"{_number(low)} to {_number(high)}")
    elif low is not None:
        found.insert(0, f"at least {_number(low)}")
    elif high is not None:
        found.insert(0, f"at most {_number(high)}")
    return found


def _number(value: Any) -> str:
    """A bound as one reads it: 2^40 rather than 1099511627776, 16,384 with commas."""
    if isinstance(value, int) and value >= 1 << 20 and value & (value - 1) == 0:
        return f"2^{value.bit_length() - 1}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _kind(metadata: list[Any]) -> str | None:
    return next((m.name for m in metadata if isinstance(m, Kind)), None)


_ACRONYMS = {"bgp": "BGP", "ecn": "ECN", "pfc": "PFC", "asic": "ASIC", "nic": "NIC",
             "ets": "ETS", "asn": "ASN", "qos": "QoS"}


def model_words(model: type[BaseModel]) -> str:
    """A model's name as words: LinkClass -> "link class", NicIntent -> "NIC settings"."""
    name = model.__name__.removesuffix("Intent") or model.__name__
    words = [w.lower() for w in re.findall(r"[A-Z][a-z]*", name)]
    return " ".join(_ACRONYMS.get(w, w) for w in words) or name


def type_text(annotation: Any, metadata: list[Any], links: dict[type[BaseModel], str]) -> str:
    """An annotation in words: "integer (1-60)", "list of DSCP (0-63)", a link to a model."""
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *more = get_args(annotation)
        return type_text(base, [*more, *metadata], links)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        return " or ".join(type_text(a, metadata if len(options) == 1 else [], links)
                           for a in options)
    extra = _constraints(metadata)
    suffix = f" ({', '.join(extra)})" if extra else ""
    if origin is list:
        return f"list of {type_text(get_args(annotation)[0], [], links)}{suffix}"
    if origin is dict:
        key, value = get_args(annotation)
        return (f"map of {type_text(key, [], links)} to {type_text(value, [], links)}"
                f"{suffix}")
    if origin is Literal:
        return "one of " + ", ".join(code(str(v)) for v in get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(code(str(m.value)) for m in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{model_words(annotation)}](#{links[annotation]})"
    name = _kind(metadata) or _BASES.get(annotation, getattr(annotation, "__name__", "value"))
    return f"{name}{suffix}"


def _flow(value: Any) -> str:
    """A value as YAML flow text: what one writes in the file."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flow(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    text = str(value)
    if isinstance(value, str) and (not text or any(c in text for c in "{}[],:#&*!|>'\"%@`")):
        return '"' + text.replace('"', '\\"') + '"'
    return text


def _all_defaults(value: BaseModel) -> bool:
    """Whether a model's every key is its field's default (`timers: BgpTimers()`)."""
    try:
        return value == type(value)()
    except ValueError:  # a model with required keys has no such instance
        return False


def default_text(info: FieldInfo) -> str:
    """The default as the reference shows it: required, not set, or the value."""
    if info.default_factory is not None:
        value = info.default_factory()  # type: ignore[call-arg]
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    if value is None:
        return "not set"
    if isinstance(value, BaseModel) and _all_defaults(value):
        return "each key's default"
    return code(_flow(value))


def _doc(model: type[BaseModel]) -> str:
    return prose(" ".join(inspect.cleandoc(model.__doc__).split())) if model.__doc__ else ""


def markdown() -> str:
    """The reference's body: one section per model, its keys as a table."""
    found = sections()
    links = {s.model: s.id for s in found}
    lines: list[str] = []
    for section in found:
        lines += ["", f"## {prose(section.title)} {{#{section.id}}}", ""]
        if section.model.__doc__:
            lines += [_doc(section.model), ""]
        if section.others():
            lines += ["Also at: " + ", ".join(code(p) for p in section.others()) + ".", ""]
        rows = []
        for name, info in section.model.model_fields.items():
            rows.append((code(info.alias or name),
                         type_text(info.annotation, list(info.metadata), links),
                         default_text(info), prose(info.description or "")))
        lines += table(("key", "type", "default", "what it is"), rows)
    return "\n".join(lines).strip() + "\n"
