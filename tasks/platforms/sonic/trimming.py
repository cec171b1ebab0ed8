"""Packet trimming on SONiC: what flatfab owns of it in CONFIG_DB, what GCU and orchagent make
of a change to it, and what of a switch's trimming flatfab has no place for.

configdb.to_config_db writes the rows and configdb.from_config_db reads them back, as SONiC's
packet-trimming design gives them (sonic-net/SONiC doc/packet_trimming/
packet-trimming-design.md, revision 0.2 "Asymmetric DSCP"): `SWITCH_TRIMMING|GLOBAL` (size,
`dscp_value` "from-tc", `tc_value`, `queue_index`), one `TC_TO_DSCP_MAP` per trim DSCP bound
to each port by `PORT_QOS_MAP` `tc_to_dscp_map` (towards hosts or towards the fabric), and
`packet_discard_action` "trim" on the RoCE queue's buffer profile.

Ownership (render.OWNED_TABLES, MERGED_TABLES): `SWITCH_TRIMMING` is one global row, merged
like `SWITCH_HASH`, but flatfab owns its four fields (FIELDS) whether the intent renders them
or not: a fabric that does not trim wants them gone; a field a later design revision adds
stays the switch's. `TC_TO_DSCP_MAP` is flatfab's whole, as its other QoS maps are.

What a change can do (changes.refusals):
- orchagent's SwitchOrch refuses to remove packet trimming or a field of it (the design,
  2.6.1.1, supports neither). apply-patch would still take the removal out of CONFIG_DB,
  which would then say off while the ASIC trims on (sonic-mgmt's GCU trimming tests,
  tests/generic_config_updater/test_packet_trimming_config_*.py, tolerate just that error
  after their rollback). So flatfab never pushes it: the commit is refused; off needs
  SWITCH_TRIMMING out of the saved config_db.json and `config reload`.
- A push that adds trimming or a field of it is applied, with a note: a rollback of that
  commit (commit-confirm's revert, `config rollback`) is such a removal.
- `packet_discard_action`: bufferorch does not remove it (the design, 2.6.1.2) and GCU edits
  no buffer profile field but `dynamic_th` and `xoff` (sonic-utilities
  gcu_field_operation_validators.conf.json); flatfab puts it on a profile of its own
  (`egress_lossy_trim_profile`), which a change adds or removes whole.

Releases: community SONiC 202511 on. 202505 has no packet trimming (sonic-mgmt skips its GCU
trimming tests there: sonic-net/sonic-mgmt pull requests 20551 and 20673); the asymmetric
DSCP flatfab renders came with the design's revision 0.2 (sonic-buildimage pull request
22951, `tc_value` and "from-tc" in sonic-trimming.yang). On an older release GCU refuses the
patch: it takes no change to a table without a YANG model (sonic-utilities
generic_config_updater, `validate_config_db_patch_has_yang_models`), and its
sonic-buffer-profile model has no `packet_discard_action`. Whether the ASIC trims at all
(and which sizes and queues it takes) is the switch's STATE_DB `SWITCH_CAPABILITY|switch`,
which orchagent checks; flatfab does not read it (platform.yaml refuses Tomahawk-5, whose
fixed size and queue the intent cannot ask for).
"""

from __future__ import annotations

from flatfab.platforms.configdb import TRIM_MAP_TABLE, TRIM_TABLE, ConfigDb

TABLE = TRIM_TABLE
KEY = "GLOBAL"
MAP_TABLE = TRIM_MAP_TABLE
# the fields of the design's SWITCH_TRIMMING schema: flatfab's, rendered or not
FIELDS = ("size", "dscp_value", "tc_value", "queue_index")
DISCARD = "packet_discard_action"  # a BUFFER_PROFILE field
DYNAMIC = "dynamic"  # queue_index: the trimmed packet's queue from its DSCP's maps
DISABLE_TRIM = "DISABLE_TRIM"  # an ACL rule's PACKET_ACTION: its packets are never trimmed
REMOVAL_REFUSED = ("orchagent refuses to remove packet trimming or a field of it (SONiC's "
                   "packet-trimming design), so CONFIG_DB would say off while the ASIC trims "
                   "on: it must leave the saved config_db.json")
ONCE_ON = ("a rollback of this commit (commit-confirm's revert, `config rollback`) cannot "
           "take it away again: orchagent refuses the removal, so CONFIG_DB would say off "
           "while the ASIC trims on; taking it away")
DISCARD_REMOVAL = ("bufferorch does not remove a buffer profile's packet_discard_action "
                   "(SONiC's packet-trimming design)")


def not_modelled(db: ConfigDb) -> dict[str, str]:
    """What of the switch's trimming flatfab has no place for (name -> why): a field beyond
    the design's four, a dynamic queue (read as the trim TC's: configdb), an ACL rule that
    exempts packets from trimming."""
    row = db.get(TABLE, {}).get(KEY)
    if row is None:
        return {}
    out = {f"{TABLE}|{KEY} {name}": "flatfab's trimming has no such field"
           for name in sorted(row) if name not in FIELDS}
    if row.get("queue_index") == DYNAMIC:
        out[f"{TABLE}|{KEY} queue_index {DYNAMIC}"] = (
            "the switch picks the trimmed packet's queue through its DSCP's maps: read as "
            "the queue of tc_value")
    for key, rule in sorted(db.get("ACL_RULE", {}).items()):
        if rule.get("PACKET_ACTION") == DISABLE_TRIM:
            out[f"ACL_RULE|{key} {DISABLE_TRIM}"] = (
                "the packets it matches are dropped, not trimmed: flatfab models trimming "
                "per queue, not per flow")
    return out
