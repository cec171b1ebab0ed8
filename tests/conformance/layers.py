"""The package's layers, bottom to top: the one declaration the layering tests enforce
(tests/conformance/test_contract.py) and the developers' pages draw (docs/development/).

Data only, no imports: the site's build reads it as a file. Each layer is (its parts: folders
or top-level modules of tasks/, what it is).
"""

LAYERS = (
    (("__init__", "errors", "exitcodes", "asn", "atomic", "bundled", "cpupin", "devicejson",
      "extras", "gcpause", "outdir", "yamlio"),
     "helpers that know no fabric: errors, exit codes, files, YAML, optional extras"),
    (("model",), "the neutral fabric state, planned and observed, and wire constants"),
    (("qos",), "the lossless plane's arithmetic: headroom, buffers, thresholds"),
    (("cluster",), "the cluster's side: scheduler topology, NCCL and RDMA settings of a state"),
    (("checks",), "the checks; checks.base is the findings' vocabulary"),
    (("telemetry",), "a library: samples, gNMI paths, client and target, health engine"),
    (("transport",), "the SSH transports of the drivers"),
    (("platforms",), "render, collect and drive each platform (platforms.base: the contract)"),
    (("intent",), "the operator's files, validated against the platforms' contract"),
    (("plan",), "intent to planned state: addresses, ASNs, sessions, QoS per port"),
    (("acceptance",), "acceptance runs: pairs from the plan, engines, references, verdicts"),
    (("reports",), "audit reports in every format"),
    (("runbook",), "rollout plans: phases, gates, schedules"),
    (("workflows",), "the commands over Nornir: rollout, verify, audit, watch"),
    (("lab",), "the lab: containerlab topology, embedded namespaces"),
    (("scaffold",), "flatfab init: a new project"),
    (("sot",), "the source of truth (Nautobot)"),
    (("catalog",), "the one catalog of every finding: the CLI lists it, the docs are made of it"),
    (("distributed",), "Celery workers and beat: Celery stays out of every layer below"),
    (("cli",), "the command line"),
    (("docsite",), "the documentation site's generated pages: the CLI never needs them"),
    (("testing",), "the platform contract as tests a platform package runs on itself"),
)

# below them in the order, yet never imported by them: the checks judge what the intent asks,
# the plan promises and the platforms collect, so none of these leans on the judge's code
APART = {"intent": ("checks",), "plan": ("checks",), "platforms": ("checks",)}

# inside tasks/workflows/, bottom to top: what a run keeps (journal, lock, state), how devices
# are reached (inventory, credentials, connections, reads), the project on disk, the commands,
# and the distributed form of the commands (a shard runs a command's per-device phase)
WORKFLOWS = (
    ("runs", "a run's journal, lock, state"),
    ("devices", "inventory, credentials, connections, reads"),
    ("project", "flatfab.yaml and the fabric's files"),
    ("commands", "verify, audit, rollout, rollback, traffic, watch, render"),
    ("sharding", "distributed runs: shards, codec, coordinator"),
)
