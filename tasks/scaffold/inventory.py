"""A plain Nornir SimpleInventory for the fabric's real devices, commented with everything an
operator fills in: management addresses, user names, where passwords come from, SSH keys and
the agent, known_hosts, each platform's connection options, timeouts, gNMI targets.

Every device flatfab connects to (`required_devices`: every switch and every managed host)
is a host, each in its role's group (`spines`, `leafs`, `hosts`, as the lab's inventory
names them, so a runbook's `group:` selects the same devices in both); an unmanaged host
(the intent's `managed: false`) needs no entry and gets none, only its name in a comment.
A role whose switches share one platform carries that platform and its plugin's options;
a role that mixes platforms gets one group per platform (`leafs-eos`), listed before the
role's own, so the platform and options come from it and the user name from the role.
Addresses are placeholders from the documentation ranges (RFC 5737), which nothing answers.
"""

from __future__ import annotations

import ipaddress
import json
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from flatfab.errors import FlatfabError
from flatfab.model.state import FabricState, Role
from flatfab.platforms.base import InventoryOption, Platform
from flatfab.workflows.devices.inventory_checks import required_devices

# RFC 5737: TEST-NET-1, -2 and -3, for documentation; never routed
PLACEHOLDER_NETS = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")
ROLE_ORDER = (Role.SUPERSPINE, Role.SPINE, Role.LEAF, Role.HOST)
USERNAME = "admin"
WIDTH = 94  # comment text per line


@dataclass
class Group:
    name: str
    role: Role
    platform: str | None  # None: the role mixes platforms (its platform groups carry them)
    parent: str | None = None  # a platform group's role group
    members: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Layout:
    groups: list[Group]
    host_groups: dict[str, list[str]]  # device -> its groups, in Nornir's order
    addresses: dict[str, str]


def group_name(role: Role) -> str:
    return f"{role.value}s"


def password_variable(name: str) -> str:
    """The environment variable of a credential set's password (the set's name upper-cased,
    every other character than A-Z and 0-9 an underscore)."""
    return "FLATFAB_PASSWORD_" + "".join(c if c.isascii() and c.isalnum() else "_"
                                         for c in name.upper())


def placeholders() -> Iterator[str]:
    for net in PLACEHOLDER_NETS:
        yield from (str(a) for a in ipaddress.ip_network(net).hosts())


def layout(plan: FabricState) -> Layout:
    groups: list[Group] = []
    host_groups: dict[str, list[str]] = {}
    listed = required_devices(plan)
    for role in ROLE_ORDER:
        members = [name for name, d in listed.items() if d.role is role]
        if not members:
            continue
        used = sorted({plan.devices[m].platform for m in members})
        main = Group(group_name(role), role, used[0] if len(used) == 1 else None)
        groups.append(main)
        if main.platform is not None:
            main.members = members
            host_groups.update((m, [main.name]) for m in members)
            continue
        for platform in used:
            sub = Group(f"{main.name}-{platform}", role, platform, parent=main.name,
                        members=[m for m in members if plan.devices[m].platform == platform])
            groups.append(sub)
            host_groups.update((m, [sub.name, main.name]) for m in sub.members)
    free = placeholders()
    addresses: dict[str, str] = {}
    for name in listed:
        address = next(free, None)
        if address is None:
            raise FlatfabError(f"{len(listed)} devices: more than the documentation "
                               "ranges hold for placeholder addresses")
        addresses[name] = address
    return Layout(groups, host_groups, addresses)


# -- text ------------------------------------------------------------------------------------


def _comment(text: str, indent: int = 0) -> list[str]:
    """A paragraph as comment lines; a paragraph starting with two spaces (a command) is
    kept as it is."""
    pad = " " * indent
    if not text:
        return [f"{pad}#"]
    if text.startswith("  "):
        return [f"{pad}# {text}"]
    return [f"{pad}# {line}" for line in textwrap.wrap(text, WIDTH - indent)]


def _header(*paragraphs: str) -> list[str]:
    return [line for text in paragraphs for line in _comment(text)]


def _scalar(value: Any) -> str:
    """A value as YAML reads it back (a string quoted only where it must be)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items()) + "}"
    text = str(value)
    try:
        plain = YAML(typ="safe").load(text) == text and not set(text) & set(",[]{}#&*!|>'\"%@`")
    except YAMLError:
        plain = False
    return text if plain else json.dumps(text)


def _tree(options: Sequence[InventoryOption]) -> dict[str, Any]:
    """Dotted keys as nested mappings (insertion order kept), leaves the options."""
    root: dict[str, Any] = {}
    for option in options:
        *parents, last = option.key.split(".")
        node = root
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = option
    return root


def _active(node: Any) -> bool:
    if isinstance(node, InventoryOption):
        return node.active
    return any(_active(child) for child in node.values())


def _render(node: dict[str, Any], indent: int, show_all: bool = False) -> list[str]:
    """A tree of options as YAML lines, each with why above it: active options as settings,
    the others commented out (a mapping with nothing active, whole)."""
    lines: list[str] = []
    pad = " " * indent
    for key, child in node.items():
        if isinstance(child, InventoryOption):
            lines += _comment(child.why, indent)
            setting = f"{key}: {_scalar(child.value)}"
            lines.append(f"{pad}{setting}" if show_all or child.active else f"{pad}# {setting}")
        elif show_all or _active(child):
            lines += [f"{pad}{key}:", *_render(child, indent + 2, show_all)]
        else:
            block = [f"{pad}{key}:", *_render(child, indent + 2, show_all=True)]
            lines += [f"{pad}# {line[indent:]}" for line in block]
    return lines


def _gnmi(indent: int) -> list[str]:
    pad = " " * indent
    return [
        *_comment("`flatfab watch` and a rollout gate's telemetry: these switches' gNMI "
                  "targets (hostname: the host's unless set here); without one, their class "
                  "counters are polled", indent),
        f"{pad}# gnmi:",
        f"{pad}#   port: 57400  # the targets' port: no default, NOSes differ",
        f"{pad}#   extras:",
        f"{pad}#     ca_file: gnmi-ca.pem  # their certificates' CA, relative to this folder",
        f"{pad}#     tls_server_name: switch.fabric.example  # the name they carry",
        f"{pad}#     username_env: FLATFAB_GNMI_USERNAME  # the environment variables that",
        f"{pad}#     password_env: FLATFAB_GNMI_PASSWORD  # hold them, never the secrets",
    ]


def _group_lines(group: Group, platforms: Mapping[str, Platform]) -> list[str]:
    lines = [f"{group.name}:"]
    if group.parent is not None:
        lines += _comment(f"the {group.platform} switches among the {group.parent}: "
                          f"platform and connection options ({group.parent} gives the "
                          "user name)", 2)
    else:
        lines.append(f"  data: {{role: {group.role.value}}}")
    if group.platform is not None:
        lines += _comment(f"{platforms[group.platform].facts.description}; it must be the "
                          "intent's platform for these devices", 2)
        lines.append(f"  platform: {group.platform}")
    if group.parent is None:
        lines += _comment("the account flatfab logs in with (replace); its password: "
                          f"{password_variable(group.name)}, else FLATFAB_PASSWORD, or "
                          "--ask-pass", 2)
        lines.append(f"  username: {USERNAME}")
    if group.platform is None:
        return lines
    platform = platforms[group.platform]
    plugin = platform.facts.connection.plugin
    options = platform.inventory_options()
    tree = _tree(options)
    # with nothing set, the key itself stays a comment (Nornir reads an empty one as null)
    lines.append("  connection_options:" if _active(tree) else "  # connection_options:")
    lines += _comment(f"Nornir's {plugin} plugin ({platform.facts.connection.driver}); "
                      "`extras` are taken whole from the first of host, groups, defaults "
                      "that has them", 4)
    lines += _render({plugin: tree}, 4)
    if group.role is not Role.HOST:
        lines += _gnmi(4)
    return lines


def hosts_text(plan: FabricState, fabric: str, shape: Layout) -> str:
    lines = _header(
        f"The devices of fabric {fabric}, for flatfab and any Nornir script "
        "(SimpleInventory), written by `flatfab init`: every device of the plan flatfab "
        "logs in to, with its groups (groups.yaml: role, platform, user name, connection "
        "options). A host the intent marks `managed: false` (hosts.yaml: another team runs "
        "it) needs no entry: flatfab never logs in to it, and an entry for it is ignored.",
        "",
        "hostname: the device's management address or DNS name. The placeholders "
        f"({', '.join(PLACEHOLDER_NETS)}) are documentation addresses (RFC 5737) that "
        "nothing answers: replace each. A management address must lie outside the "
        "fabric's own pools.",
        "",
        "A host may set anything its groups do: its own `username` (then it is a credential "
        "set of its own, password FLATFAB_PASSWORD_<HOST>), `port`, or `connection_options` "
        "(a plugin's `extras` set here replace its groups' whole: repeat the ones you keep).")
    unmanaged = plan.unmanaged()
    if unmanaged:
        lines += _comment(f"unmanaged, no entry needed: {', '.join(unmanaged)}")
    for name in shape.addresses:
        lines += [f"{name}:", f"  hostname: {shape.addresses[name]}",
                  f"  groups: [{', '.join(shape.host_groups[name])}]"]
    return "\n".join(lines) + "\n"


def groups_text(fabric: str, shape: Layout, platforms: Mapping[str, Platform]) -> str:
    lines = _header(
        f"The groups of fabric {fabric}'s devices, by role, written by `flatfab init`. A "
        "device takes each setting from its own entry, then its groups in order, then "
        "defaults.yaml (Nornir's resolution); flatfab checks that the platform it resolves "
        "is the intent's.",
        "",
        "Credentials: each group with a `username` is a credential set. A device's password "
        "comes from, first found: the prompt of `flatfab --ask-pass` (once per set, no "
        "echo), the environment variable FLATFAB_PASSWORD_<GROUP> (spines: "
        "FLATFAB_PASSWORD_SPINES), then FLATFAB_PASSWORD. Without one: SSH keys (key_file "
        "below, or your default keys) and the SSH agent. Never write a password in these "
        "files: flatfab refuses a `password:` key.")
    for group in shape.groups:
        lines += ["", *_group_lines(group, platforms)]
    return "\n".join(lines) + "\n"


def defaults_text(fabric: str) -> str:
    lines = _header(
        f"What every device of fabric {fabric} gets unless its groups or its own entry say "
        "otherwise (written by `flatfab init`); the groups set the user names and "
        "connection options.",
        "",
        "Host keys are always checked: a device whose key is not in known_hosts (default "
        "~/.ssh/known_hosts; each plugin's options in groups.yaml can name another file) is "
        "refused. Fill it once per device, from the workstation flatfab runs on:",
        "  ssh-keyscan -H <management address> >> ~/.ssh/known_hosts",
        "ssh-keyscan trusts whatever answers on that address: first compare each key's "
        "fingerprint (ssh-keygen -lf ~/.ssh/known_hosts) with the one the device's console "
        "shows.",
        "",
        "Timeouts: flatfab's --connect-timeout and --command-timeout (else flatfab.yaml's "
        "connect_timeout and command_timeout, else 10 s and 60 s) apply wherever a plugin's "
        "options set none.",
        "",
        "One account for every device whose groups set none (password: FLATFAB_PASSWORD):")
    lines += ["# username: netops", "",
              *_comment("which fabric the devices belong to, for any Nornir script (an "
                        "empty file would make Nornir warn on every run)"),
              "data:", f"  fabric: {fabric}"]
    return "\n".join(lines) + "\n"


def files(plan: FabricState, fabric: str, platforms: Mapping[str, Platform]) -> dict[str, str]:
    """hosts.yaml, groups.yaml and defaults.yaml by name."""
    shape = layout(plan)
    return {"hosts.yaml": hosts_text(plan, fabric, shape),
            "groups.yaml": groups_text(fabric, shape, platforms),
            "defaults.yaml": defaults_text(fabric)}
