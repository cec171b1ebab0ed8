"""The check catalog. Importing this package registers every check."""

from flatfab.checks import (
    balancing,
    congestion,
    interfaces,
    loadbalance,
    lossless,
    physical,
    rdma,
    tenancy,
    topology,
    underlay,
)
from flatfab.checks.base import CATALOG, Check, CheckContext, Finding, Severity, Stage, run_checks

__all__ = ["CATALOG", "Check", "CheckContext", "Finding", "Severity", "Stage", "balancing",
           "congestion",
           "interfaces",
           "loadbalance",
           "lossless", "physical", "rdma", "run_checks", "tenancy", "topology", "underlay"]
