"""The physical layer of a port: what is plugged in, how it reads, how its FEC fares.

Observed only, like counters: a collector fills `Interface.phy` where its OS states these
facts, and `unknown` names every one it does not state, with why. A value never defaults to
zero: zero corrected codewords and an unread FEC counter are different findings.

The plan carries what each link class expects (`PhysicalPolicy`): media, FEC mode, lanes,
and the thresholds the checks hold every port to.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    # no light is -inf dBm: JSON has no such number, so it travels as "-Infinity" (a null
    # would read back as "not stated")
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="strings")


def _empty(value: object) -> bool:
    return not value


class Media(StrEnum):
    """What carries a link: a copper or active optical cable, or an optic by reach class."""

    DAC = "dac"  # passive copper (direct attach)
    AOC = "aoc"  # active optical cable
    SR = "sr"  # short reach, multimode fibre (OM4)
    DR = "dr"  # 500 m single mode (parallel)
    FR = "fr"  # 2 km single mode
    LR = "lr"  # 10 km single mode
    ER = "er"  # 40 km single mode


# Reaches: the operating ranges of the IEEE 802.3 PMDs (flatfab.intent.optics says which).
# media -> speed -> reach in metres
REACH_M: dict[Media, dict[str, float]] = {
    Media.DAC: {
        "10G": 7,  # SFP+ direct attach (SFF-8431)
        "25G": 5,  # 25GBASE-CR, CA-25G-L (802.3by)
        "40G": 7,  # 40GBASE-CR4 (802.3ba)
        "50G": 3,  # 50GBASE-CR (802.3cd)
        "100G": 5,  # 100GBASE-CR4 (802.3bj)
        "200G": 3,  # 200GBASE-CR4 (802.3cd)
        "400G": 3,  # 8 x 50G lanes on the 802.3cd channel; 400GBASE-CR4 (802.3ck): 2 m
        "800G": 2,  # 800GBASE-CR8 (802.3df)
    },
    Media.AOC: dict.fromkeys(("10G", "25G", "40G", "50G", "100G", "200G", "400G", "800G"),
                             100),
    Media.SR: {
        "10G": 400,  # 10GBASE-SR (802.3ae)
        "25G": 100,  # 25GBASE-SR (802.3by)
        "40G": 150,  # 40GBASE-SR4 (802.3ba)
        "50G": 100,  # 50GBASE-SR (802.3cd)
        "100G": 100,  # 100GBASE-SR4 (802.3bm)
        "200G": 100,  # 200GBASE-SR4 (802.3cd)
        "400G": 100,  # 400GBASE-SR8, -SR4.2 (802.3cm)
        "800G": 100,  # 800GBASE-SR8 (802.3df)
    },
    Media.DR: {
        "100G": 500,  # 100GBASE-DR (802.3cd)
        "200G": 500,  # 200GBASE-DR4 (802.3bs)
        "400G": 500,  # 400GBASE-DR4 (802.3bs)
        "800G": 500,  # 800GBASE-DR8 (802.3df)
    },
    Media.FR: {
        "40G": 2_000,  # 40GBASE-FR (802.3bg)
        "50G": 2_000,  # 50GBASE-FR (802.3cd)
        "100G": 2_000,  # 100GBASE-FR1 (802.3cu)
        "200G": 2_000,  # 200GBASE-FR4 (802.3bs)
        "400G": 2_000,  # 400GBASE-FR4 (802.3cu), -FR8 (802.3bs)
        "800G": 2_000,  # 800GBASE-DR8-2 (802.3df), -FR4 (802.3dj)
    },
    Media.LR: {
        "10G": 10_000,  # 10GBASE-LR (802.3ae)
        "25G": 10_000,  # 25GBASE-LR (802.3cc)
        "40G": 10_000,  # 40GBASE-LR4 (802.3ba)
        "50G": 10_000,  # 50GBASE-LR (802.3cd)
        "100G": 10_000,  # 100GBASE-LR4 (802.3ba), -LR1 (802.3cu)
        "200G": 10_000,  # 200GBASE-LR4 (802.3bs)
        "400G": 10_000,  # 400GBASE-LR8 (802.3bs)
        "800G": 10_000,  # 800GBASE-LR4 (802.3dj)
    },
    Media.ER: {
        "10G": 40_000,  # 10GBASE-ER (802.3ae)
        "25G": 40_000,  # 25GBASE-ER (802.3cc)
        "40G": 40_000,  # 40GBASE-ER4 (802.3bm)
        "50G": 40_000,  # 50GBASE-ER (802.3cn)
        "100G": 40_000,  # 100GBASE-ER4 (802.3ba)
        "200G": 40_000,  # 200GBASE-ER4 (802.3cn)
        "400G": 40_000,  # 400GBASE-ER8 (802.3cn)
        "800G": 40_000,  # 800GBASE-ER1 (802.3dj)
    },
}


def reach_m(media: Media, speed: str) -> float | None:
    """How far `media` carries `speed` (None: no such optic)."""
    return REACH_M[media].get(speed)


class Fec(StrEnum):
    """Forward error correction in use on a port (IEEE 802.3 names)."""

    RS544 = "rs544"  # RS(544,514) "KP4": every PAM4 lane (Clauses 91, 119, 134; 802.3df)
    RS528 = "rs528"  # RS(528,514) "KR4": 25G NRZ lanes (Clauses 91, 108)
    FC = "fc"  # BASE-R (Firecode) FEC, Clause 74
    NONE = "none"


# Lane rates at which 802.3 makes RS(544,514) the only FEC: every PAM4 lane (50G, 100G and
# 200G a lane). Below, 25G NRZ lanes use RS(528,514) or, on short copper, BASE-R or none.
PAM4_LANE_MBPS = 50_000

# The pre-FEC bit error ratio each FEC is specified to correct to a frame loss ratio within
# 802.3's objective: RS(544,514) 2.4e-4 (802.3bs/cd, the PAM4 PMDs' BER target before FEC),
# RS(528,514) 5e-5 (802.3bj: 100GBASE-CR4/KR4 with Clause 91 FEC), BASE-R FEC and no FEC the
# 1e-12 of an unprotected 10G/25G NRZ PMD (802.3ae/by).
CORRECTION_LIMIT = {Fec.RS544: 2.4e-4, Fec.RS528: 5e-5, Fec.FC: 1e-12, Fec.NONE: 1e-12}

# Lane counts of the usual port forms by speed: where a link class does not say how many
# lanes its port trains, the first is what the checks expect (QSFP28 100G is 4 x 25G).
DEFAULT_LANES = {10_000: 1, 25_000: 1, 40_000: 4, 50_000: 1, 100_000: 4, 200_000: 4,
                 400_000: 8, 800_000: 8}


def default_fec(speed_mbps: int, lanes: int | None = None) -> Fec:
    """802.3's FEC for a speed and lane count: RS(544,514) on every PAM4 lane (50G a lane and
    up), RS(528,514) on 25G lanes (25GBASE-SR/CR, 100GBASE-SR4/CR4), none at 10G and 40G."""
    count = lanes or DEFAULT_LANES.get(speed_mbps, 1)
    lane = speed_mbps // max(count, 1)
    if lane >= PAM4_LANE_MBPS:
        return Fec.RS544
    if lane >= 25_000:
        return Fec.RS528
    return Fec.NONE


def fec_problem(fec: Fec, speed_mbps: int, lanes: int | None = None) -> str | None:
    """Why `fec` cannot run at this speed and lane count (None: it can)."""
    count = lanes or DEFAULT_LANES.get(speed_mbps, 1)
    lane = speed_mbps // max(count, 1)
    if lane >= PAM4_LANE_MBPS and fec is not Fec.RS544:
        return (f"{speed_mbps // 1000}G over {count} PAM4 lane(s) needs RS(544,514) FEC "
                "(IEEE 802.3 Clauses 91/119/134)")
    if lane < PAM4_LANE_MBPS and fec is Fec.RS544:
        return f"RS(544,514) FEC is for PAM4 lanes; {lane // 1000}G lanes are NRZ"
    return None


def resolve_rs(speed_mbps: int | None, lanes: int | None) -> Fec | None:
    """An OS that says only "RS-FEC" (SONiC `rs`, Linux `RS`): which one, from the lane rate
    (None: the speed is not known, so neither is the code)."""
    if not speed_mbps:
        return None
    count = lanes or DEFAULT_LANES.get(speed_mbps, 1)
    return Fec.RS544 if speed_mbps // max(count, 1) >= PAM4_LANE_MBPS else Fec.RS528


class Transceiver(_Model):
    """What is plugged into a port, as the module's own memory (SFF-8636, CMIS) states it."""

    form_factor: str | None = None  # QSFP28, QSFP-DD, OSFP, SFP28, ...
    media: Media | None = None  # None: the module states nothing flatfab maps (see unknown)
    compliance: str | None = None  # the module's stated application, e.g. 400GBASE-DR4
    vendor: str | None = None
    part: str | None = None
    serial: str | None = None
    cable_m: float | None = None  # a cable assembly's stated length (DAC, AOC)


class Thresholds(_Model):
    """A module's own alarm and warning thresholds for one measure."""

    low_alarm: float | None = None
    low_warning: float | None = None
    high_warning: float | None = None
    high_alarm: float | None = None


class Lane(_Model):
    rx_power_dbm: float | None = None
    tx_power_dbm: float | None = None
    bias_ma: float | None = None


# the measures a module's diagnostics state: per lane, or for the module
LANE_MEASURES = ("rx_power_dbm", "tx_power_dbm", "bias_ma")
MODULE_MEASURES = ("temperature_c", "voltage_v")


class Diagnostics(_Model):
    """Digital diagnostics (DDM/DOM) of a module: per lane and for the module, each measure
    with the module's own thresholds where it states them. A passive DAC has none: its
    `diagnostics` is None, and that is no unread fact (`has_diagnostics`)."""

    temperature_c: float | None = None
    voltage_v: float | None = None
    lanes: list[Lane] = Field(default_factory=list)
    thresholds: dict[str, Thresholds] = Field(default_factory=dict)  # by measure name


class FecCounters(_Model):
    """Cumulative since the counters were last cleared; None: the OS does not state it."""

    corrected: int | None = None  # codewords corrected
    uncorrectable: int | None = None  # codewords the FEC could not correct (frames lost)
    symbol_errors: int | None = None
    pre_fec_ber: float | None = None  # where the OS computes it
    post_fec_ber: float | None = None


class PortPhysical(_Model):
    """The physical layer of one port, observed. `unknown`: field -> why it was not read."""

    present: bool | None = None  # a module in the cage (None: not stated)
    module: Transceiver | None = None
    diagnostics: Diagnostics | None = None
    fec: Fec | None = None
    fec_counters: FecCounters | None = None
    flaps: int | None = None  # link state changes since boot or clear
    last_change_s: float | None = None  # seconds since the link last changed state
    speed_mbps: int | None = None  # as trained
    lanes: int | None = None
    virtual: bool = False  # the lab's stand-in for hardware, not a module
    unknown: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)


def has_diagnostics(module: Transceiver | None) -> bool:
    """Whether a module keeps digital diagnostics: every optic and AOC does, a passive
    copper cable does not (SFF-8636/CMIS: no monitors on a passive assembly)."""
    return module is None or module.media is not Media.DAC


class LinkExpectation(_Model):
    """What the plan expects of every link of one link class."""

    speed_mbps: int
    media: Media | None = None  # None: any media that reaches the cable
    fec: Fec
    lanes: int


class PhysicalThresholds(_Model):
    """What the physical checks hold each port to (defaults: flatfab.intent.physical)."""

    ber_margin: float  # the pre-FEC BER may reach the FEC's limit divided by this
    uncorrectable: int  # codewords the FEC could not correct, at most
    power_margin_db: float  # optical power stays this far inside the module's alarms
    temperature_margin_c: float  # the module stays this far below its high alarm
    flaps: int  # link flaps at most within flap_window_s
    flap_window_s: int


class PhysicalPolicy(_Model):
    classes: dict[str, LinkExpectation]  # by link class
    thresholds: PhysicalThresholds
