"""`flatfab cluster labels --apply`: set flatfab's node labels on a Kubernetes cluster with
the Kubernetes client.

Each node is read first and patched only where a flatfab label (`fabric.flatfab.io/`) is
missing, differs or is no longer planned (removed with a null in the patch); every other
label and field stays the cluster's. A planned node the cluster does not have is named and
never created: nodes are the kubelets' to register.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flatfab.cluster.labels import PREFIX
from flatfab.errors import FlatfabError
from flatfab.extras import require

NOT_FOUND = 404


@dataclass
class Applied:
    changed: dict[str, str] = field(default_factory=dict)  # node -> what changed
    unchanged: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # planned nodes the cluster lacks


def label_patch(current: Mapping[str, str], wanted: Mapping[str, str]) -> dict[str, str | None]:
    """The labels to set (and flatfab's to remove: None) to go from `current` to `wanted`."""
    patch: dict[str, str | None] = {k: v for k, v in wanted.items() if current.get(k) != v}
    patch.update({k: None for k in current if k.startswith(PREFIX) and k not in wanted})
    return dict(sorted(patch.items()))


def _describe(patch: Mapping[str, str | None]) -> str:
    return ", ".join(f"{k.removeprefix(PREFIX)}={v}" if v is not None
                     else f"{k.removeprefix(PREFIX)} removed" for k, v in patch.items())


def apply_labels(labels: Mapping[str, Mapping[str, str]], kubeconfig: Path | None,
                 context: str | None) -> Applied:
    require("kubernetes", "flatfab cluster labels --apply")
    # the kubernetes extra: imported once it is known to be there
    from kubernetes import client, config  # noqa: PLC0415
    from kubernetes.client.exceptions import ApiException  # noqa: PLC0415
    from kubernetes.config.config_exception import ConfigException  # noqa: PLC0415
    from urllib3.exceptions import HTTPError  # noqa: PLC0415 - the client's transport

    try:
        api_client = config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=str(kubeconfig) if kubeconfig is not None else None, context=context)
    except (ConfigException, OSError, ValueError) as error:
        raise FlatfabError(f"kubeconfig: {error}") from None
    api = client.CoreV1Api(api_client)
    done = Applied()
    try:
        for node, wanted in labels.items():
            try:
                found: Any = api.read_node(node)
            except ApiException as error:
                if error.status == NOT_FOUND:
                    done.missing.append(node)
                    continue
                raise FlatfabError(f"Kubernetes API, node {node}: {error.status} "
                                   f"{error.reason}") from None
            patch = label_patch(found.metadata.labels or {}, wanted)
            if not patch:
                done.unchanged.append(node)
                continue
            api.patch_node(node, {"metadata": {"labels": patch}})
            done.changed[node] = _describe(patch)
    except ApiException as error:
        raise FlatfabError(f"Kubernetes API: {error.status} {error.reason}") from None
    except (HTTPError, OSError) as error:  # connection refused, retries exhausted, TLS
        raise FlatfabError(f"Kubernetes API unreachable: {error}") from None
    finally:
        api_client.close()
    return done
