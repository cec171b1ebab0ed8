"""What the gNMI specification tests share: a PKI with client certificates (mutual TLS), a
leaf source the tests change (grow, set, drop), a target on 127.0.0.1 and raw gRPC helpers
to speak to it request by request."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import yaml
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from flatfab.telemetry import paths, tls
from flatfab.telemetry.gnmi_client import GnmiSubscriber, SubscriberPool
from flatfab.telemetry.gnmi_encode import Shapes, Value
from flatfab.telemetry.gnmi_target import Credentials, GnmiTarget
from flatfab.telemetry.samples import Gone, Metric, Sample
from tests.support.inventory import login_defaults
from tests.support.telemetry_streams import lab_plan

# where the subscriber tests put the targets' user and password (conftest.subscriber_login)
USER_ENV, PASS_ENV = "TEST_GNMI_USER", "TEST_GNMI_PASS"

GOOD = (("username", "flatfab"), ("password", "s3cret"))
CREDENTIALS = Credentials("flatfab", "s3cret")
QUEUE = PRIORITY = 3


class Pki:
    """A CA, a server certificate for 127.0.0.1/localhost, a client certificate from the same
    CA, and a client certificate from an unrelated CA."""

    def __init__(self, where: Path) -> None:
        ca = tls.make_ca("flatfab test CA")
        other = tls.make_ca("somebody else's CA")
        files = {"ca.pem": ca.cert}
        for name, pem in (("server", tls.make_server_cert(ca, ["localhost", "127.0.0.1"])),
                          ("client", tls.make_client_cert(ca, "watcher")),
                          ("stranger", tls.make_client_cert(other, "stranger"))):
            files[f"{name}.crt"], files[f"{name}.key"] = pem.cert, pem.key
        for name, data in files.items():
            (where / name).write_bytes(data)
            (where / name).chmod(0o600)
        self.where = where
        self.ca = ca.cert
        self.ca_file = where / "ca.pem"
        self.server_cert, self.server_key = files["server.crt"], files["server.key"]

    def file(self, name: str) -> Path:
        return self.where / name


def lab_leaves(ports: tuple[str, ...] = ("swp1", "swp2")) -> dict[str, Value]:
    """flatfab's own leaves for `ports`, as the lab's switches serve them."""
    out: dict[str, Value] = {}
    for port in ports:
        out[paths.leaf_path(Metric.OPER_UP, port)] = "UP"
        for metric in (Metric.QUEUE_TX, Metric.QUEUE_DROPS, Metric.QUEUE_ECN):
            out[paths.leaf_path(metric, port, QUEUE)] = 100
        for metric in (Metric.PFC_RX, Metric.PFC_TX, Metric.WATCHDOG):
            out[paths.leaf_path(metric, port, PRIORITY)] = 0
    return out


class Source:
    """Leaves a test sets and drops; integer counters grow by `step` on every read (not
    oper-status, not leaf-lists)."""

    def __init__(self, leaves: dict[str, Value] | None = None, step: int = 1) -> None:
        self._lock = threading.Lock()
        self.leaves = dict(lab_leaves() if leaves is None else leaves)
        self.step = step
        self.reads = 0

    def set(self, path: str, value: Value) -> None:
        with self._lock:
            self.leaves[path] = value

    def drop(self, path: str) -> None:
        with self._lock:
            self.leaves.pop(path, None)

    def __call__(self) -> list[tuple[str, Value]]:
        with self._lock:
            self.reads += 1
            for path, value in self.leaves.items():
                if isinstance(value, int) and "pfc" not in path and "watchdog" not in path:
                    self.leaves[path] = value + self.step
            return list(self.leaves.items())


def start_target(pki: Pki, source: Source, *, mutual: bool = False,
                 credentials: Credentials | None = CREDENTIALS,
                 shapes: Shapes | None = None, **kw: Any) -> GnmiTarget:
    target = GnmiTarget("127.0.0.1", 0, source, credentials, pki.server_cert, pki.server_key,
                        name="sw1", poll_s=0.02, client_ca=pki.ca if mutual else None,
                        shapes=shapes or Shapes(), **kw)
    target.start()
    return target


def stub(pki: Pki, target: GnmiTarget, client: str | None = None) -> Any:
    """A raw gNMI stub; `client` names the certificate it presents ("client", "stranger")."""
    key = chain = None
    if client is not None:
        chain, key = pki.file(f"{client}.crt").read_bytes(), pki.file(f"{client}.key").read_bytes()
    creds = grpc.ssl_channel_credentials(root_certificates=pki.ca, private_key=key,
                                         certificate_chain=chain)
    return gnmi_pb2_grpc.gNMIStub(grpc.secure_channel(f"127.0.0.1:{target.port}", creds))


def sub(path: str, mode: int = gnmi_pb2.SubscriptionMode.SAMPLE, interval_s: float = 0.0,
        origin: str = "", **kw: Any) -> Any:
    return gnmi_pb2.Subscription(path=paths.to_proto(path, origin) if path != "/" else
                                 gnmi_pb2.Path(origin=origin), mode=mode,
                                 sample_interval=int(interval_s * 1e9), **kw)


def request(*subs: Any, mode: int = gnmi_pb2.SubscriptionList.STREAM, **kw: Any) -> Any:
    return gnmi_pb2.SubscribeRequest(
        subscribe=gnmi_pb2.SubscriptionList(subscription=list(subs), mode=mode, **kw))


class Call:
    """A Subscribe RPC whose requests the test sends one by one (the stream stays open)."""

    def __init__(self, stub_: Any, first: Any, md: Any = GOOD) -> None:
        self._out: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._out.put(first)
        self.responses: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.error: grpc.RpcError | None = None
        self.ended = threading.Event()
        self._call = stub_.Subscribe(self._requests(), metadata=md)
        threading.Thread(target=self._read, daemon=True).start()

    def _requests(self) -> Iterator[Any]:
        while True:
            item = self._out.get()
            if item is None:
                return  # half-close
            yield item

    def _read(self) -> None:
        try:
            for response in self._call:
                self.responses.put(response)
        except grpc.RpcError as exc:
            self.error = exc
        finally:
            self.ended.set()
            self._out.put(None)  # the request generator ends with the RPC

    def send(self, req: Any) -> None:
        self._out.put(req)

    def half_close(self) -> None:
        self._out.put(None)

    # waits for what must come: long, since `make test` keeps both cores busy (a target's
    # first response took over 3 s there); what must not come is judged by `gather`
    def next(self, timeout: float = 20.0) -> Any:
        return self.responses.get(timeout=timeout)

    def until_sync(self, timeout: float = 20.0) -> list[Any]:
        """Every response up to and including the next sync_response."""
        out: list[Any] = []
        while True:
            resp = self.next(timeout)
            out.append(resp)
            if resp.WhichOneof("response") == "sync_response":
                return out

    def gather(self, seconds: float) -> list[Any]:
        out: list[Any] = []
        end = threading.Event()
        end.wait(seconds)
        while True:
            try:
                out.append(self.responses.get_nowait())
            except queue.Empty:
                return out

    def status(self, timeout: float = 20.0) -> Any:
        """The status the RPC ended with (OK if it ended cleanly)."""
        assert self.ended.wait(timeout), "the RPC did not end"
        return grpc.StatusCode.OK if self.error is None else self.error.code()

    def cancel(self) -> None:
        self._call.cancel()
        self.half_close()


def updates(responses: list[Any]) -> dict[str, Any]:
    """Full path (origin-qualified where one is set) -> TypedValue, from every notification."""
    out: dict[str, Any] = {}
    for resp in responses:
        if resp.WhichOneof("response") != "update":
            continue
        note = resp.update
        prefix = note.prefix if note.HasField("prefix") else None
        for u in note.update:
            origin = paths.origin_of(u.path, prefix)
            text = paths.render(paths.from_proto(u.path, prefix))
            out[f"{origin}:{text}" if origin else text] = u.val
    return out


def gnmi_inventory(where: Path, extras: dict[str, Any]) -> Path:
    """A Nornir inventory in `where` of the lab plan's switches and hosts on documentation
    addresses, leaf1 with a gNMI connection (port 9339) whose extras are these."""
    plan = lab_plan()
    hosts = {name: {"hostname": f"192.0.2.{n + 1}", "platform": device.platform,
                    "groups": [f"{device.role.value}s"]}
             for n, (name, device) in enumerate(plan.devices.items())}
    hosts["leaf1"]["connection_options"] = {"gnmi": {"port": 9339, "extras": extras}}
    (where / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    groups = {f"{d.role.value}s": {"data": {}} for d in plan.devices.values()}
    (where / "groups.yaml").write_text(yaml.safe_dump(groups))
    (where / "defaults.yaml").write_text(yaml.safe_dump(
        login_defaults(where, (h["hostname"] for h in hosts.values()))))
    return where


class Recording:
    """What a subscriber's threads record, read by the test under one lock (re-entrant: a
    condition waited on may call the recorder's own readers)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()

    def wait(self, ok: Callable[[], bool], timeout: float = 5.0) -> bool:
        """True once `ok()` holds (checked under the lock), False after `timeout` seconds."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                if ok():
                    return True
            time.sleep(0.02)
        return False


class Watcher(Recording):
    """A subscriber on its own pool, recording samples, lines and deletes."""

    def __init__(self, port: int, ca: Path, **kw: Any) -> None:
        self.samples: list[Sample] = []
        self.states: list[tuple[str, str]] = []
        self.gone: list[Gone] = []
        super().__init__()
        self.sub = GnmiSubscriber("sw1", "127.0.0.1", port, ca_file=ca, interval_s=0.1,
                                  on_sample=self._sample, on_state=self._state,
                                  on_deletes=self._gone, username_env=USER_ENV,
                                  password_env=PASS_ENV, backoff_s=(0.05, 0.2), **kw)
        self.pool = SubscriberPool([self.sub])

    def _sample(self, s: Sample) -> None:
        with self._lock:
            self.samples.append(s)

    def _state(self, state: str, line: str) -> None:
        with self._lock:
            self.states.append((state, line))

    def _gone(self, gone: list[Gone]) -> None:
        with self._lock:
            self.gone.extend(gone)

    def seen(self) -> set[tuple[str, Metric, int | None]]:
        with self._lock:
            return {(s.port, s.metric, s.key) for s in self.samples}

    def __enter__(self) -> Watcher:
        self.pool.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.pool.stop()
