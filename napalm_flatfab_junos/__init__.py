"""NAPALM entry point for flatfab's Junos driver: napalm.get_network_driver("flatfab_junos")
(NAPALM's junos driver with the switch's SSH host key checked)."""

from flatfab.platforms.junos.verified import FlatfabJunosDriver

__all__ = ["FlatfabJunosDriver"]
