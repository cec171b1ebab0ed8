"""Platform `linux_host`: GPU servers (ConnectX NICs) and the lab's hosts, over SSH."""

from tasks.platforms.base import Platform
from tasks.platforms.linux_host.collect import collect
from tasks.platforms.linux_host.render import render

PLATFORM = Platform(name="linux_host", napalm_driver="linux_host", render=render,
                    collect=collect, commit_confirm=True)
