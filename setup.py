"""What pyproject.toml cannot say: which repository folder installs as which package.

`tasks/`, the project's folder of Nornir tasks and the rest of its code, installs as the
package `flatfab`: a top-level `tasks` would clash with the module of that name that many
projects have (a Celery app's, for one). The example fabrics, runbooks and dashboard that
`flatfab init` hands out install inside it, from the folders a checkout keeps them in.
"""

from setuptools import find_namespace_packages, setup

FOLDERS = {"flatfab": "tasks", "flatfab.examples": "intents", "flatfab.runbooks": "runbooks",
           "flatfab.dashboards": "dashboards"}


def packages(name: str, folder: str) -> list[str]:
    """The package and every folder below it (a data folder is a package to setuptools)."""
    below = find_namespace_packages(folder, exclude=["*__pycache__*"])
    return [name, *(f"{name}.{sub}" for sub in below)]


setup(
    packages=[*(p for name, folder in FOLDERS.items() for p in packages(name, folder)),
              "napalm_frr", "napalm_linux_host", "napalm_flatfab_junos"],
    package_dir=FOLDERS,
)
