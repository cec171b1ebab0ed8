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
from flatfab.platforms.base import DEFAULT_TIMEOUTS, Timeouts
from flatfab.platforms.registry import PLATFORMS
from flatfab.workflows.devices.credentials import Credentials
from flatfab.workflows.project import projectfile
from flatfab.workflows.project.projectfile import ProjectFile


def _missing(path: Path) -> bool:
    """Nothing at all at `path` (a file, a dangling link or a path through a file is
    something: the loader names those)."""
    try:
        path.lstat()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


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
    # --connect-timeout and --command-timeout (None: the project file's, else flatfab's)
    connect_timeout: float | None = None
    command_timeout: float | None = None
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
    def timeouts(self) -> Timeouts:
        """How long a run waits on a device: the command line's, else the project file's,
        else flatfab's (10 s to open a session, 60 s for a command's answer)."""
        return Timeouts(
            connect=self.connect_timeout or self.settings.connect_timeout
            or DEFAULT_TIMEOUTS.connect,
            command=self.command_timeout or self.settings.command_timeout
            or DEFAULT_TIMEOUTS.command)

    @property
    def state_dir(self) -> Path:
        """Journals and locks of change runs."""
        return self.state_override or self.root / ".flatfab"

    @cached_property
    def intent(self) -> Intent:
        if _missing(self.intent_dir) and projectfile.find_root(self.root) is None:
            # most likely not a project at all: say how to start one
            raise InputError.single(str(self.intent_dir), "", "intent directory not found, "
                                    f"and no {projectfile.FILE_NAME} in {self.root} or a "
                                    "folder above: not a flatfab project; `flatfab init` "
                                    "starts one")
        return load_intent(self.intent_dir, known_platforms=PLATFORMS, fabric=self.fabric,
                           warn=self.on_warning)

    @cached_property
    def address_spaces(self) -> list[AddressSpace]:
        """The pools the fabric allocates from (management addresses must stay out)."""
        return address_spaces(self.intent)

    @cached_property
    def plan(self) -> FabricState:
        return plan(self.intent)
