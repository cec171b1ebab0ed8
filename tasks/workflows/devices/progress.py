"""A Nornir Processor that shows a live progress bar per workflow step."""

from __future__ import annotations

from nornir.core.inventory import Host
from nornir.core.task import AggregatedResult, MultiResult, Task
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class RichProgress:
    """Progress on stderr, so stdout stays clean for --format json."""

    def __init__(self, console: Console | None = None, enabled: bool = True) -> None:
        self.console = console or Console(stderr=True)
        self.enabled = enabled and self.console.is_terminal
        self._progress: Progress | None = None
        self._task_id: int | None = None
        self.failed: list[str] = []

    def task_started(self, task: Task) -> None:
        self.failed = []
        if not self.enabled:
            return
        self._progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                  MofNCompleteColumn(), TextColumn("{task.fields[last]}"),
                                  TimeElapsedColumn(), console=self.console, transient=True)
        self._progress.start()
        total = len(task.nornir.inventory.hosts)
        self._task_id = self._progress.add_task(task.name, total=total, last="")

    def task_completed(self, task: Task, result: AggregatedResult) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def task_instance_started(self, task: Task, host: Host) -> None:
        return None

    def task_instance_completed(self, task: Task, host: Host, result: MultiResult) -> None:
        if result.failed:
            self.failed.append(host.name)
        if self._progress is not None and self._task_id is not None:
            mark = "failed" if result.failed else "ok"
            self._progress.update(self._task_id, advance=1,  # type: ignore[arg-type]
                                  last=f"{host.name} {mark}")

    def subtask_instance_started(self, task: Task, host: Host) -> None:
        return None

    def subtask_instance_completed(self, task: Task, host: Host, result: MultiResult) -> None:
        return None
