"""Where a fabric's files live in the project, and the intent/plan loaded from them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from flatfab.errors import InputError, InputProblem
from flatfab.intent.loader import load_intent
from flatfab.intent.models import Intent
from flatfab.intent.names import fabric_problem
from flatfab.intent.semantics import AddressSpace, address_spaces
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.workflows.credentials import Credentials
from flatfab.workflows.projectfile import ProjectFile


@dataclass(frozen=True)
class Project:
    root: Path
    fabric: str
    inventory_override: Path | None = None
    state_override: Path | None = None
    # the project file's defaults (timeouts and the like; root, fabric and folders are above)
    settings: ProjectFile = field(default_factory=ProjectFile)
    # hears the intent's warnings (the CLI prints them); None: not told
    on_warning: Callable[[InputProblem], None] | None = field(default=None, compare=False)
    # where device passwords come from: the environment, and with --ask-pass a prompt
    credentials: Credentials = field(default_factory=Credentials, compare=False)

    def __post_init__(self) -> None:
        # the fabric names a folder, a topology file, journals and locks: never a path
        why = fabric_problem(self.fabric)
        if why is not None:
            raise InputError.single("--fabric", "", why)

    @property
    def intent_dir(self) -> Path:
        return self.root / "intents" / self.fabric

    @property
    def inventory_dir(self) -> Path:
        return self.inventory_override or self.root / "inventory" / self.fabric

    @property
    def labs_dir(self) -> Path:
        return self.root / "labs"

    @property
    def topology_file(self) -> Path:
        return self.labs_dir / f"{self.fabric}.clab.yml"

    @property
    def state_dir(self) -> Path:
        """Journals and locks of change runs."""
        return self.state_override or self.root / ".flatfab"

    @cached_property
    def intent(self) -> Intent:
        return load_intent(self.intent_dir, known_platforms=PLATFORMS, fabric=self.fabric,
                           warn=self.on_warning)

    @cached_property
    def address_spaces(self) -> list[AddressSpace]:
        """The pools the fabric allocates from (management addresses must stay out)."""
        return address_spaces(self.intent)

    @cached_property
    def plan(self) -> FabricState:
        return plan(self.intent)
