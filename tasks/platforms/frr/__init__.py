"""Platform `frr`: Linux + FRR switches (the lab's switch, white boxes, Linux switchdev)."""

from tasks.platforms.base import Platform
from tasks.platforms.frr.collect import collect
from tasks.platforms.frr.render import render

PLATFORM = Platform(name="frr", napalm_driver="frr", render=render, collect=collect,
                    commit_confirm=True)
