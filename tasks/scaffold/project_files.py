"""The project's own files: flatfab.yaml (each key with what it does, from the project
file's model), .gitignore and a short README with the next commands."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Final

from flatfab.model.state import FabricState
from flatfab.platforms.base import Platform
from flatfab.workflows.project.projectfile import FILE_NAME, ProjectFile

# what each key of the project file is when not set (flatfab's defaults), written commented
DEFAULTS: Final[dict[str, str]] = {
    "inventory": "inventory/{fabric}",
    "state_dir": ".flatfab",
    "connect_timeout": "10",
    "command_timeout": "60",
}
STATE_DIR: Final = DEFAULTS["state_dir"]


def _comment(text: str) -> list[str]:
    return [f"# {line}" for line in textwrap.wrap(text, 92)]


def project_file(fabric: str) -> str:
    lines = [
        *_comment("The flatfab project file: this folder is the project's root, and every "
                  "flatfab command run in it or in a folder below finds it (as git finds its "
                  "repository). It holds the project's defaults; a command-line option wins "
                  "over it."),
    ]
    for key, info in ProjectFile.model_fields.items():
        lines += ["", *_comment(str(info.description))]
        lines.append(f"{key}: {fabric}" if key == "fabric" else f"# {key}: {DEFAULTS[key]}")
    return "\n".join(lines) + "\n"


def gitignore(fabric: str) -> str:
    return "\n".join([
        "# journals, locks and backups of change runs (rollback reads them: keep them, "
        "not in git)",
        f"/{STATE_DIR}/",
        "# generated: the lab's topology and node files, rendered configs, reports, logs",
        "/labs/",
        "/out/",
        "/reports/",
        "*.log",
        f"# the embedded lab's inventory (`flatfab --inventory inventory/{fabric}-lab lab up`)",
        "/inventory/*-lab/",
    ]) + "\n"


PLURAL: Final = {"superspine": "super-spines", "spine": "spines", "leaf": "leaves",
                  "host": "hosts"}


def _platform_line(plan: FabricState, platforms: Mapping[str, Platform]) -> str:
    used: dict[str, list[str]] = {}
    for device in plan.devices.values():
        roles = used.setdefault(device.platform, [])
        if PLURAL[device.role.value] not in roles:
            roles.append(PLURAL[device.role.value])
    return "; ".join(f"{name} ({', '.join(roles)}): {platforms[name].facts.description}"
                     for name, roles in used.items())


def first_rollout(files: Sequence[str]) -> str | None:
    """The plan for a first rollout: first-bring-up, else another bring-up, else any."""
    ranked = sorted(files, key=lambda f: (f != "first-bring-up.yaml",
                                          not f.endswith("bring-up.yaml"), f))
    return ranked[0] if ranked else None


def readme(fabric: str, example: str, command: str, plan: FabricState,
           platforms: Mapping[str, Platform], runbooks: Sequence[tuple[str, str]],
           notes: Sequence[str]) -> str:
    """`runbooks`: (file name, description) of the rollout plans written."""
    switches = [d for d in plan.devices.values() if d.role.value != "host"]
    hosts = len(plan.devices) - len(switches)
    embedded = all(platforms[d.platform].facts.lab.embedded for d in plan.devices.values())
    lab_inventory = f"inventory/{fabric}-lab"
    first = first_rollout([file for file, _ in runbooks])
    lines = [
        f"# {fabric}",
        "",
        f"A flatfab project, written by `{command}` from the example fabric `{example}`: "
        f"{len(switches)} switches and {hosts} hosts.",
        "",
        f"Platforms: {_platform_line(plan, platforms)}.",
        "",
        "## What is where",
        "",
        f"- `{FILE_NAME}`: the project file. This folder is the project's root: flatfab "
        "finds it from any folder inside it. It names the fabric and holds the defaults "
        "(inventory, state folder, timeouts); each key is explained there.",
        f"- `intents/{fabric}/`: the fabric's intent. `fabric.yaml`: switches, underlay, "
        "link classes; `hosts.yaml`: the GPU servers and how they attach (`managed: false` "
        "for those another team runs: planned and checked from the switches, never logged "
        "in to, no inventory entry); `tenants.yaml`: tenant VRFs; `qos.yaml` (where "
        "present): the lossless RoCEv2 profile, every key not written there at its canonical "
        "default.",
        f"- `inventory/{fabric}/`: the Nornir inventory of the real devices (hosts, groups, "
        "defaults). Replace every `hostname` (documentation addresses that nothing answers) "
        "and `username`; the comments show every option: passwords (never in the files: "
        "`FLATFAB_PASSWORD_<GROUP>`, `FLATFAB_PASSWORD` or `--ask-pass`), SSH keys and the "
        "agent, known_hosts, each platform's connection options, timeouts, gNMI targets.",
        "- `runbooks/`: rollout plans (`flatfab rollout --runbook`) that fit this fabric:",
    ]
    lines += [f"  - `runbooks/{file}`: {description}" for file, description in runbooks]
    if not runbooks:
        lines.append("  none of flatfab's fits; `flatfab rollout` without one rolls the "
                     "whole fabric out in one phase.")
    lines += [
        f"- `{STATE_DIR}/`: journals, locks and device backups of change runs, made by the "
        "first one (git-ignored; `flatfab rollback` needs them).",
    ]
    if notes:
        lines += ["", "Fitted to the platforms chosen (see the top of "
                  f"`intents/{fabric}/qos.yaml`):", ""]
        lines += [f"- {note}" for note in notes]
    lines += [
        "",
        "## Next",
        "",
        "1. `flatfab plan`: every device's addresses, ASNs, sessions and VRFs "
        "(`--diagram fabric.svg` draws it).",
        "2. `flatfab check`: the static checks, before anything is pushed.",
        "3. `flatfab render --out out/`: each device's configuration, to read.",
    ]
    if embedded:
        lines.append(
            f"4. A lab of this fabric on this machine (as root): `flatfab lab generate`, then "
            f"`flatfab --inventory {lab_inventory} lab up`; run any command below with the "
            f"same `--inventory {lab_inventory}` against it; `flatfab lab down` ends it. "
            f"(Without `--inventory`, `lab up` would write the lab's inventory over "
            f"`inventory/{fabric}/`: it refuses.)")
    else:
        lines.append(
            f"4. A lab of this fabric: `flatfab lab generate` writes a containerlab topology "
            f"(`labs/{fabric}.clab.yml`); its platforms need their vendors' images, and "
            "`flatfab lab up --runtime clab` deploys it with containerlab.")
    lines += [
        "5. Fill in the inventory and known_hosts, then `flatfab rollout --dry-run`: each "
        "device's diff, read-only; a device that cannot be read is named, never taken for "
        "\"no change\".",
        f"6. `flatfab rollout --runbook runbooks/{first}`: the first phased rollout, each "
        "commit with a revert timer, gated and confirmed." if first else
        "6. `flatfab rollout`: the first rollout, each commit with a revert timer, gated and "
        "confirmed.",
        "7. `flatfab verify`: the live checks (BGP, ECMP, MTU, tenancy; `--lossless` for the "
        "lossless plane); `flatfab audit --report-dir reports/`: drift and checks, on a "
        "schedule.",
        "",
        "`flatfab -h` lists every command; `flatfab <command> -h` its options.",
    ]
    return "\n".join(lines) + "\n"
