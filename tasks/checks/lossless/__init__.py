"""The lossless check catalog (lossless-domain reference §8, I-1..I-20): importing registers it.

Every check runs on the plan (`flatfab check`) and on collected state
(`flatfab verify --lossless`), measuring each hop against the plan's fabric-wide
`LosslessProfile`. Findings about values the lab keeps in its virtual ASIC or virtual NIC
(PFC, ECN, buffers, scheduling) carry `virtual=True`; the DSCP map, the hosts' ToS and CNP
marking and MTUs are the kernel's and never do.
"""

from flatfab.checks.lossless import (
    buffers,
    capacity,
    classification,
    ecn,
    hosts,
    mtu,
    pfc,
    profiles,
    retry,
    scheduling,
    trimming,
    unread,
)

__all__ = ["buffers", "capacity", "classification", "ecn", "hosts", "mtu", "pfc", "profiles",
           "retry", "scheduling", "trimming", "unread"]
