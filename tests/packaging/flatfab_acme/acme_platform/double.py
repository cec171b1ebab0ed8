"""An Acme switch answering show commands from recorded outputs (recorded/<device>/), and
logging what it was sent: the device the conformance suite collects from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

RECORDED = Path(__file__).with_name("recorded")
# command -> file of its output
FILES = {"show interfaces | json": "interfaces.json",
         "show qos interfaces | json": "qos.json",
         "show bgp neighbors | json": "bgp.json"}


class RecordedAcme:
    """The driver of a recorded Acme switch: show commands only, nothing changes."""

    def __init__(self, device: str) -> None:
        self.folder = RECORDED / device
        self.log: list[str] = []

    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]:
        self.log += commands
        return {c: (self.folder / FILES[c]).read_text(encoding="utf-8") for c in commands}

    def __getattr__(self, name: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError(f"a recorded Acme switch does not {name}()")
        return refused
