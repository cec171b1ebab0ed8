"""Link-level retry on SONiC (fabric.yaml `link_classes.<name>.llr`): one `LLR_PORT` row per
port, what GCU and llrmgrd make of a change to it, and what of a switch's retry flatfab has no
place for.

The schema is SONiC's own, and its sources agree on it:
- the YANG model `sonic-llr-port` (sonic-buildimage, "LLR: Link Layer Retry feature yang and
  docker script changes", pull request 27028): list `LLR_PORT_LIST` keyed by `port` (a leafref
  to a `PORT` row), `llr_mode` (enumeration static / dynamic, default static), `llr_local` and
  `llr_remote` (sonic-types `admin_mode`: "enabled" / "disabled", default disabled),
  `llr_profile` (a leafref to `LLR_PROFILE`);
- sonic-utilities' `config llr interface mode|local|remote <port> ...` ("[LLR]: CLI
  implementation for Link Layer Retry feature", pull request 4499, merged): it writes exactly
  those fields of `LLR_PORT|<port>`, after checking STATE_DB `SWITCH_CAPABILITY|switch`
  `LLR_CAPABLE` "true";
- llrmgrd (sonic-swss, "LLR: Link Layer Retry implementation", pull request 4528) reads the
  same fields. The design ("SONiC Link Layer Retry" high-level design, sonic-net/SONiC
  doc/llr/Link_Layer_Retry_Design.md) still shows a global `LLR_CONFIG|GLOBAL` mode and a
  `profile` field: the model and the code moved the mode onto the port and named the binding
  `llr_profile`; flatfab follows the model.

What flatfab renders: each port of a link class with `llr: true` gets `llr_mode` "static",
`llr_local` and `llr_remote` "enabled". llrmgrd applies retry only with both enabled, so a
row with one of them is no retry at all on that port (read back as off, and named in
`not_modelled`). `LLR_PORT` is flatfab's whole (render.OWNED_TABLES): a port the plan gives
no retry has no row, and a row flatfab does not render is removed (llrmgrd then removes the
port from APPL_DB and llrorch turns retry off on it).

What takes effect: llrmgrd binds a port to an LLR profile before it publishes it, either the
row's `llr_profile` (an `LLR_PROFILE` row; fabric.yaml has no retry parameters, so flatfab
renders none) or the one the HWSKU's `llr_profile_lookup.ini` gives the port's speed (STATE_DB)
and its `CABLE_LENGTH` (which flatfab renders from the plan's cable). A switch without that
file or without a row for the port's speed and cable keeps the row and retries nothing;
flatfab does not read STATE_DB's LLR state or `LLR_CAPABLE`.

What a change can do (changes.refusals): llrmgrd acts on the fields an `LLR_PORT` row
carries, so a field taken out of a row that stays (an `llr_profile` an operator bound, say)
keeps its effect in llrmgrd until the row goes or llrmgrd restarts: that edit is refused.

Releases: none yet. The model (pull request 27028) and llrmgrd (pull request 4528) are
newer than 202511 and were still open pull requests when last read (only the CLI and the
design are merged); a release without the model refuses the patch (GCU takes no change to a
table without a YANG model), and one without llrmgrd would ignore the rows.
"""

from __future__ import annotations

from flatfab.platforms.configdb import LLR_TABLE, ConfigDb

TABLE = LLR_TABLE
MODE, LOCAL, REMOTE, PROFILE = "llr_mode", "llr_local", "llr_remote", "llr_profile"
STATIC = "static"
ENABLED = "enabled"
# the row of a port that retries, as sonic-llr-port names its fields
ROW = {MODE: STATIC, LOCAL: ENABLED, REMOTE: ENABLED}
FIELDS = (MODE, LOCAL, REMOTE, PROFILE)
FIELD_REMOVAL = ("llrmgrd acts only on the fields an LLR_PORT row carries: a field taken "
                 "out of a row that stays keeps its effect until the row goes")


def row() -> dict[str, str]:
    """A fresh `LLR_PORT` row of a port that retries."""
    return dict(ROW)


def retries(fields: dict[str, str] | None) -> bool:
    """Whether llrmgrd runs retry on a port with this row: static mode (its default) and
    both directions enabled."""
    return (fields is not None and fields.get(MODE, STATIC) == STATIC
            and fields.get(LOCAL) == ENABLED and fields.get(REMOTE) == ENABLED)


def not_modelled(db: ConfigDb) -> dict[str, str]:
    """What of the switch's link-level retry flatfab has no place for (name -> why)."""
    out: dict[str, str] = {}
    for port, fields in sorted(db.get(TABLE, {}).items()):
        where = f"{TABLE}|{port}"
        mode = fields.get(MODE, STATIC)
        if mode != STATIC:
            out[f"{where} {MODE} {mode}"] = (
                "llrmgrd takes static mode only: it drops the row, so the port does not retry")
        elif not retries(fields) and ENABLED in (fields.get(LOCAL), fields.get(REMOTE)):
            out[f"{where} one direction"] = (
                "llrmgrd retries only with llr_local and llr_remote both enabled: read as off")
        if PROFILE in fields:
            out[f"{where} {PROFILE} {fields[PROFILE]}"] = (
                "an LLR profile bound by hand: flatfab models no retry parameters (the HWSKU's "
                "llr_profile_lookup.ini picks them by speed and cable length)")
        for name in sorted(set(fields) - set(FIELDS)):
            out[f"{where} {name}"] = "sonic-llr-port has no such field"
    return out
