"""The connection options of flatfab's own SSH drivers (NAPALM drivers `frr` and
`linux_host`, flatfab.platforms.shell_driver) as a real inventory sets them: what
`flatfab init` writes, commented, under `connection_options.napalm`. Kept apart from the
driver so listing them needs no NAPALM import."""

from __future__ import annotations

from flatfab.platforms.base import InventoryOption

ARGS = "extras.optional_args"


def ssh_driver_options() -> tuple[InventoryOption, ...]:
    """Authentication, host keys, privileges and timeouts, as ShellDriver reads them."""
    return (
        InventoryOption(f"{ARGS}.key_file", "/home/netops/.ssh/id_ed25519",
                        "private key to log in with (default: the SSH agent, then your "
                        "default keys; a password from the environment or --ask-pass wins)"),
        InventoryOption(f"{ARGS}.known_hosts", "~/.ssh/known_hosts",
                        "host keys the devices' keys are checked against (default "
                        "~/.ssh/known_hosts); a missing file or entry refuses the device"),
        InventoryOption(f"{ARGS}.port", 22, "SSH port"),
        InventoryOption(f"{ARGS}.sudo", True,
                        "run changing commands through `sudo -n` (false: the account "
                        "is root)"),
        InventoryOption(f"{ARGS}.mgmt_interfaces", ["eth0"],
                        "interfaces that carry management: flatfab never configures them"),
        InventoryOption(f"{ARGS}.timeout", 10,
                        "seconds to open the SSH session (default: flatfab's connect "
                        "timeout)"),
        InventoryOption("extras.timeout", 60,
                        "seconds one command may take (default: flatfab's command "
                        "timeout)"),
    )
