"""The cluster's side of the fabric: what schedulers and the RDMA layer above the NICs must
agree with (issue 37): scheduler topology from the plan, NCCL and RDMA settings."""
