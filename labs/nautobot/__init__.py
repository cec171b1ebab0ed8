"""A local, throwaway Nautobot (PostgreSQL + Redis + Nautobot's web server on 127.0.0.1) for
tests and demos: `python -m labs.nautobot.server up|down|status|token`, and
`python -m labs.nautobot.seed --fabric lab` to write a fabric's plan into it. Not part of
the runtime package: flatfab reaches any Nautobot through tasks/sot/."""
