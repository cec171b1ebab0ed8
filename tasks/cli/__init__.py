"""The `flatfab` command line: a thin typer layer over workflows."""
