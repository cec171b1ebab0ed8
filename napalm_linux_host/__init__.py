"""NAPALM entry point for flatfab's Linux host driver: get_network_driver("linux_host")."""

from tasks.platforms.linux_host.driver import LinuxHostDriver

__all__ = ["LinuxHostDriver"]
