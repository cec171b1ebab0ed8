"""NAPALM entry point for flatfab's Linux host driver: get_network_driver("linux_host")."""

from flatfab.platforms.linux_host.driver import LinuxHostDriver

__all__ = ["LinuxHostDriver"]
