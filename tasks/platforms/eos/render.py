"""DeviceState -> EOS CLI: the AVD structured config through flatfab's own templates."""

from __future__ import annotations

from flatfab.model.state import DeviceState
from flatfab.platforms.base import PlatformFacts
from flatfab.platforms.eos.avd import structured_config
from flatfab.platforms.templating import environment


def render(device: DeviceState, facts: PlatformFacts) -> str:
    template = environment("flatfab.platforms.eos").get_template("eos.cfg.j2")
    return template.render(sc=structured_config(device, facts))
