"""NAPALM entry point for flatfab's FRR driver: napalm.get_network_driver("frr")."""

from flatfab.platforms.frr.driver import FrrDriver

__all__ = ["FrrDriver"]
