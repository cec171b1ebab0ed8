"""The gNMI SubscribeResponse as the subscriber reads it: the same wire format, with each
update's path kept as its bytes.

A Path is a message of elements, each with a map of keys: parsing one per update is most of
the cost of a notification (3,328 updates for a switch of 64 ports), and the subscriber
looks a path up by its bytes anyway (the decoded meaning of each path is cached). Protobuf
encodes an embedded message and a bytes field alike (wire type 2, length-delimited:
protobuf's encoding guide), so a message declaring `path` as bytes reads the same stream,
and the path is parsed only the first time it is seen (`gnmi_pb2.Path.FromString`).

Declared here from gNMI 0.8.0's gnmi.proto (openconfig/gnmi, read 2026-11-30): Notification
fields 1-6 and Update fields 1, 3 and 4 by their numbers; SubscribeResponse's `update` (1)
and `sync_response` (3). What is not declared (Update's deprecated `value`, the response's
deprecated `error` and its extensions) is kept as unknown fields and read by nobody, as the
full messages' readers ignored it.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from pygnmi.spec.v080 import gnmi_pb2

_PACKAGE = "flatfab.gnmi_lite"
_F = descriptor_pb2.FieldDescriptorProto


def _file() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(
        name="flatfab/gnmi_lite.proto", package=_PACKAGE, syntax="proto3",
        dependency=[gnmi_pb2.DESCRIPTOR.name])

    def message(name: str, *fields: tuple[str, int, int, str | None],
                repeated: tuple[str, ...] = ()) -> descriptor_pb2.DescriptorProto:
        out = proto.message_type.add(name=name)
        for field_name, number, kind, type_name in fields:
            label = _F.LABEL_REPEATED if field_name in repeated else _F.LABEL_OPTIONAL
            added = out.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name is not None:
                added.type_name = type_name
        return out

    message("Update", ("path", 1, _F.TYPE_BYTES, None),
            ("val", 3, _F.TYPE_MESSAGE, ".gnmi.TypedValue"),
            ("duplicates", 4, _F.TYPE_UINT32, None))
    message("Notification", ("timestamp", 1, _F.TYPE_INT64, None),
            ("prefix", 2, _F.TYPE_MESSAGE, ".gnmi.Path"), ("alias", 3, _F.TYPE_STRING, None),
            ("update", 4, _F.TYPE_MESSAGE, f".{_PACKAGE}.Update"),
            ("delete", 5, _F.TYPE_MESSAGE, ".gnmi.Path"), ("atomic", 6, _F.TYPE_BOOL, None),
            repeated=("update", "delete"))
    response = message("SubscribeResponse",
                       ("update", 1, _F.TYPE_MESSAGE, f".{_PACKAGE}.Notification"),
                       ("sync_response", 3, _F.TYPE_BOOL, None))
    response.oneof_decl.add(name="response")
    for member in response.field:
        member.oneof_index = 0
    return proto


def _classes() -> tuple[Any, Any]:
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName("flatfab/gnmi_lite.proto")
    except KeyError:
        pool.AddSerializedFile(_file().SerializeToString())
    return tuple(message_factory.GetMessageClass(
        pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
        for name in ("SubscribeResponse", "Notification"))


SubscribeResponse, Notification = _classes()


def lite(notification: Any) -> Any:
    """A full gnmi_pb2.Notification as this module's (tests and tools build full ones)."""
    if isinstance(notification, Notification):
        return notification
    return Notification.FromString(notification.SerializeToString())
