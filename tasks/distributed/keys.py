"""The Redis keys of a distributed run, all under `flatfab:run:<run id>:`.

spec                    the run's RunSpec (JSON): what every shard does; gone = run over
shard:<id>:result       the shard's output (zlib JSON), written once (SET NX: first wins)
shard:<id>:failed       why the shard failed for good (text), written once
shard:<id>:deliveries   INCR per delivery of the shard's task (retry and redelivery count)
shard:<id>:attempts     hash: delivery number -> what became of it (who ran it, its error)
done                    list of shard ids as each gets a result or fails (the coordinator
                        waits on it with BLPOP)
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

PREFIX = "flatfab:run"
MAX_DELIVERIES = 2  # a shard is tried at most twice: once, and one retry


def new_run_id(kind: str, fabric: str, now: float) -> str:
    """`<UTC stamp>-<kind>-<fabric>-<random>`: unique even for runs in the same second."""
    stamp = datetime.fromtimestamp(now, UTC)
    return f"{stamp:%Y%m%dT%H%M%SZ}-{kind}-{fabric}-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class RunKeys:
    run_id: str

    @property
    def spec(self) -> str:
        return f"{PREFIX}:{self.run_id}:spec"

    @property
    def done(self) -> str:
        return f"{PREFIX}:{self.run_id}:done"

    def shard(self, shard_id: str) -> ShardKeys:
        return ShardKeys(self.run_id, shard_id)


@dataclass(frozen=True)
class ShardKeys:
    run_id: str
    shard_id: str

    def _key(self, what: str) -> str:
        return f"{PREFIX}:{self.run_id}:shard:{self.shard_id}:{what}"

    @property
    def result(self) -> str:
        return self._key("result")

    @property
    def failed(self) -> str:
        return self._key("failed")

    @property
    def deliveries(self) -> str:
        return self._key("deliveries")

    @property
    def attempts(self) -> str:
        return self._key("attempts")

    def all(self) -> list[str]:
        return [self.result, self.failed, self.deliveries, self.attempts]
