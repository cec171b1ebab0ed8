"""Streaming telemetry as a library below the platforms: samples, gNMI paths, client and
target, TLS, targets, rates and the health engine that judges samples into live
lossless-health findings. It imports only the model, the checks' finding vocabulary and the
shared helpers; the `flatfab watch` loop that drives it is flatfab.workflows.commands.watch."""
