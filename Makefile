# flatfab: the two commands a new user needs are `make demo` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
FLATFAB := $(BIN)/flatfab
FABRIC ?= lab
# OS packages of the embedded lab (FRR, sshd, lldpd, iproute2, ...) and of the Python venv;
# prometheus: its server scrapes `flatfab watch` in the dashboard's tests (promtool too);
# slurmctld and scontrol (slurm-client): Slurm's own parser judges the topology flatfab writes
APT_PACKAGES := frr frr-pythontools iproute2 iputils-ping openssh-server openssh-client sudo \
	lldpd nftables iptables ethtool tcpdump traceroute iperf3 util-linux passwd procps \
	python3-venv libyang2-dev gcc prometheus slurmctld slurm-client
# the dev extra builds the libyang binding (SONiC YANG oracle of the tests) against these
YANG_HEADER := /usr/include/libyang/libyang.h
LAB_COMMANDS := vtysh /usr/lib/frr/frr-reload.py sshd lldpd ping nft ip sudo ssh-keygen \
	prometheus promtool slurmctld scontrol
# the source-of-truth service (labs/nautobot/): a PostgreSQL server and Redis
NAUTOBOT_APT := postgresql redis-server
SOT := $(BIN)/python -m labs.nautobot.server

.PHONY: help deps os-deps venv demo demo-down test test-deps lint typecheck unit live golden bench \
	lock clean nautobot-deps nautobot-up nautobot-down nautobot-status nautobot-seed lock-nautobot \
	docs docs-serve

help:
	@echo "make demo      install what is needed, bring up the lab, roll out, verify, audit"
	@echo "make test      lint, type-check and run every test (live lab tests need root)"
	@echo "make golden    regenerate golden files (review the diff before committing)"
	@echo "make docs      build the documentation site into site/ (docs-serve: on 127.0.0.1:8000)"
	@echo "make bench     print plan/render/check benchmark figures"
	@echo "make demo-down tear the demo lab down"
	@echo "make nautobot-up / nautobot-seed / nautobot-down   a local Nautobot (source of truth)"

deps: os-deps venv

# Install the lab's OS packages only when one of its commands is missing.
os-deps:
	@missing=0; for c in $(LAB_COMMANDS); do \
		command -v $$c >/dev/null 2>&1 || [ -x $$c ] || [ -x /usr/sbin/$$c ] || missing=1; done; \
	$(PYTHON) -m venv --help >/dev/null 2>&1 || missing=1; \
	[ -e $(YANG_HEADER) ] && command -v gcc >/dev/null 2>&1 || missing=1; \
	if [ $$missing = 1 ]; then \
		if [ "$$(id -u)" != 0 ]; then echo "error: OS packages missing; run as root" >&2; exit 2; fi; \
		echo "installing OS packages: $(APT_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $(APT_PACKAGES) >/dev/null; \
	fi

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml setup.py constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	@touch $@

demo: deps
	$(FLATFAB) --fabric $(FABRIC) lab down >/dev/null
	$(FLATFAB) --fabric $(FABRIC) lab generate
	$(FLATFAB) --fabric $(FABRIC) check
	$(FLATFAB) --fabric $(FABRIC) lab up
	$(FLATFAB) --fabric $(FABRIC) rollout --runbook runbooks/first-bring-up.yaml
	$(FLATFAB) --fabric $(FABRIC) rollout
	$(FLATFAB) --fabric $(FABRIC) verify --lossless --traffic
	$(FLATFAB) --fabric $(FABRIC) audit --report-dir .flatfab/reports
	$(FLATFAB) --fabric $(FABRIC) watch --interval 2 --count 3
	@echo
	@echo "Audit report: $(CURDIR)/.flatfab/reports/flatfab-audit-$(FABRIC).html (also .json, .junit.xml, .md, .prom)"
	@echo "The lab stays up: try '$(FLATFAB) lab status', '$(FLATFAB) verify --lossless --format json',"
	@echo "'$(FLATFAB) watch --prometheus 127.0.0.1:9464' (live lossless health over gNMI; Ctrl-C ends it),"
	@echo "'ssh -i /run/flatfab/ff/ssh/id_ed25519 -o UserKnownHostsFile=/run/flatfab/ff/ssh/known_hosts ff-admin@172.31.255.13'."
	@echo "Tear it down with 'make demo-down'."

demo-down: venv
	$(FLATFAB) --fabric $(FABRIC) lab down

lint: venv
	$(BIN)/ruff check tasks labs napalm_frr napalm_linux_host napalm_flatfab_junos tests benchmarks docs/hooks

# mypy knows a package by its folder's name: .typecheck/flatfab is a link to tasks/ (setup.py)
typecheck: venv
	@mkdir -p .typecheck && ln -sfn ../tasks .typecheck/flatfab
	MYPYPATH=.typecheck $(BIN)/mypy .typecheck/flatfab labs napalm_frr napalm_linux_host napalm_flatfab_junos docs/hooks

unit: venv
	$(BIN)/pytest -q -m "not live and not nautobot"

live: venv
	$(BIN)/pytest -q -m live

# Debian's Chromium: the HTML audit report is tested by rendering it headless
test-deps: deps nautobot-deps
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" != 0 ]; then echo "error: chromium missing; run as root" >&2; exit 2; fi; \
		echo "installing chromium (for the HTML report test)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends chromium >/dev/null; }

# Offline, classic-lab and Nautobot + rail-lab sessions at once (tests/suites.sh says why),
# lint and type-check beside them
test: test-deps
	PYTEST=$(BIN)/pytest STATIC_CHECKS="$(MAKE) --no-print-directory lint typecheck" \
		tests/suites.sh

golden: venv
	FLATFAB_REGEN_GOLDEN=1 $(BIN)/pytest -q -m "not live and not nautobot" -k golden
	@git status --short tests/golden docs

# The documentation site (mkdocs.yml): strict, offline; reference pages made from the code.
# Material's notice about its successor is not a warning of this build.
docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict --dev-addr 127.0.0.1:8000

bench: venv
	$(BIN)/python benchmarks/scale.py

# The source of truth's OS packages (PostgreSQL server, Redis), only when one is missing.
nautobot-deps:
	@{ ls /usr/lib/postgresql/*/bin/initdb && command -v redis-server; } >/dev/null 2>&1 || { \
		if [ "$$(id -u)" != 0 ]; then echo "error: PostgreSQL server or Redis missing; run as root" >&2; exit 2; fi; \
		echo "installing OS packages: $(NAUTOBOT_APT)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $(NAUTOBOT_APT) >/dev/null; }

# A local Nautobot on 127.0.0.1:58080 (Nautobot itself installs into .venv-nautobot/ on first up).
nautobot-up: nautobot-deps venv
	$(SOT) up

nautobot-down: venv
	$(SOT) down

nautobot-status: venv
	@$(SOT) status

nautobot-seed: venv
	$(BIN)/python -m labs.nautobot.seed --fabric $(FABRIC)

# Re-resolve and pin Nautobot's own venv (review the diff of constraints-nautobot.txt).
lock-nautobot:
	rm -rf /tmp/flatfab-lock-nautobot && $(PYTHON) -m venv /tmp/flatfab-lock-nautobot
	/tmp/flatfab-lock-nautobot/bin/pip install -q nautobot==$$(sed -n \
		's/^NAUTOBOT_VERSION = "\(.*\)"/\1/p' labs/nautobot/settings.py)
	{ echo "# Every package of Nautobot's own venv (.venv-nautobot), pinned: \`make lock-nautobot\` regenerates it."; \
		/tmp/flatfab-lock-nautobot/bin/pip freeze; } > constraints-nautobot.txt
	rm -rf /tmp/flatfab-lock-nautobot

# Re-resolve and pin every dependency (review the diff of constraints.txt).
lock:
	rm -rf /tmp/flatfab-lock && $(PYTHON) -m venv /tmp/flatfab-lock
	/tmp/flatfab-lock/bin/pip install -q -e '.[dev]'
	/tmp/flatfab-lock/bin/pip freeze --exclude-editable | grep -v '^flatfab' > constraints.txt
	rm -rf /tmp/flatfab-lock

clean:
	-$(FLATFAB) --fabric $(FABRIC) lab down --sweep
	-$(SOT) down
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache site
