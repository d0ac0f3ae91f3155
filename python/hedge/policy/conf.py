"""A user's own Hadoop and Spark speculation settings, for ``hedge simulate -D KEY=VALUE`` and
``--conf mapred-site.xml``: which action limit or policy parameter each property sets.

- The limits (:data:`hedge.policy.limits.PROPERTIES`: ``mapreduce.{map,reduce}.speculative``,
  the three ``mapreduce.job.speculative`` caps, ``hedge.caps.enforce``) apply to every
  simulated policy, as the AM applies them to any speculator.
- Hadoop's DefaultSpeculator reads the caps too, and ``retry-after-speculate`` and
  ``slowtaskthreshold``: they also set the ``hadoop`` policy's parameters.
- Spark's ``spark.speculation.quantile``, ``.multiplier`` and ``.minTaskRuntime`` set the
  ``spark`` and ``spark-legacy`` policies' parameters.
- Real properties hedge does not model (:data:`IGNORED`) are a warning saying so; any other
  name in these families is a typo and an error. In a ``--conf`` file, properties outside the
  families (``mapreduce.framework.name``...) are not speculation settings and are skipped.
"""

from __future__ import annotations

import difflib
import math
import re
import xml.parsers.expat
from dataclasses import dataclass, field
from pathlib import Path

from hedge.errors import HedgeError
from hedge.policy import limits

_MS = 1e-3


def _number(low: float, high: float = math.inf, scale: float = 1.0):
    """A converter: text -> text of a number in [low, high] times ``scale``."""
    def convert(text: str) -> str | None:
        try:
            value = float(text)
        except ValueError:
            return None
        return repr(value * scale) if low <= value <= high else None
    convert.expected = (f"a number in [{low:g}, {high:g}]" if math.isfinite(high)  # type: ignore[attr-defined]
                        else f"a number >= {low:g}") + (" (milliseconds)" if scale == _MS else "")
    return convert


def _integer(text: str) -> str | None:
    """A converter: text -> text of an integer >= 0."""
    return str(int(text)) if text.strip().lstrip("+").isdigit() else None


_integer.expected = "an integer >= 0"  # type: ignore[attr-defined]


def _spark_duration(text: str) -> str | None:
    """Spark's time strings: ``100ms``, ``1s``, ``2min``, ``1h``; a bare number is ms."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|min|h)?\s*", text)
    if not match:
        return None
    scale = {"ms": 1e-3, None: 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
    return repr(float(match.group(1)) * scale[match.group(2)])


_spark_duration.expected = "a duration such as 100ms, 1s or 2min"  # type: ignore[attr-defined]

# property -> {policy: (parameter, converter)}: what it sets besides (or instead of) a limit
POLICY_PARAMS: dict[str, dict[str, tuple[str, object]]] = {
    "mapreduce.job.speculative.speculative-cap-running-tasks": {
        "hadoop": ("proportion_running", _number(0))},
    "mapreduce.job.speculative.speculative-cap-total-tasks": {
        "hadoop": ("proportion_total", _number(0))},
    "mapreduce.job.speculative.minimum-allowed-tasks": {
        "hadoop": ("minimum_allowed", _integer)},
    "mapreduce.job.speculative.retry-after-speculate": {
        "hadoop": ("retry_after_speculate", _number(0, scale=_MS))},
    "mapreduce.job.speculative.slowtaskthreshold": {"hadoop": ("slow_task_std", _number(0))},
    "spark.speculation.quantile": {"spark": ("quantile", _number(0, 1)),
                                   "spark-legacy": ("quantile", _number(0, 1))},
    "spark.speculation.multiplier": {"spark": ("multiplier", _number(0)),
                                     "spark-legacy": ("multiplier", _number(0))},
    "spark.speculation.minTaskRuntime": {"spark": ("min_runtime", _spark_duration),
                                         "spark-legacy": ("min_runtime", _spark_duration)},
}

# real properties hedge does not model, and why
IGNORED: dict[str, str] = {
    "mapreduce.job.speculative.retry-after-no-speculate":
        "the simulated AM scans every --cluster scan= seconds",
    "mapreduce.job.speculative.slownodethreshold": "an MRv1 property the MRv2 AM never reads",
    "mapreduce.job.speculative.speculativecap": "an MRv1 property the MRv2 AM never reads",
    "yarn.app.mapreduce.am.job.speculator.class": "the simulator runs the --policy given",
    "yarn.app.mapreduce.am.job.task.estimator.class": "each policy uses its own estimator",
    "spark.speculation": "the spark policies always speculate (--policy none is no speculation)",
    "spark.speculation.interval": "the simulated AM scans every --cluster scan= seconds",
    "spark.speculation.task.duration.threshold": "the spark policy does not model it",
    "spark.speculation.efficiency.enabled": "the spark policy does not model it",
    "spark.speculation.efficiency.processRateMultiplier": "the spark policy does not model it",
    "spark.speculation.efficiency.longRunTaskFactor": "the spark policy does not model it",
}
KNOWN = list(dict.fromkeys([*limits.PROPERTIES, *POLICY_PARAMS, *IGNORED]))
# the families a typo is looked for in; other names in a --conf file are not speculation's
_FAMILIES = ("mapreduce.job.speculative.", "mapreduce.map.speculative",
             "mapreduce.reduce.speculative", "spark.speculation", "hedge.caps.")
_HADOOPISH = ("mapreduce.", "mapred.", "yarn.", "hadoop.", "dfs.", "fs.", "io.", "spark.")


@dataclass
class UserSettings:
    """What -D and --conf set: the limits, policy parameters (text, by policy), what was
    applied (property -> value and where it came from) and warnings."""

    speculation: limits.SpeculationSettings = field(default_factory=limits.SpeculationSettings)
    policy_params: dict[str, dict[str, str]] = field(default_factory=dict)
    # per policy, the properties that set its parameters and no limit (unused without it)
    policy_only: dict[str, list[str]] = field(default_factory=dict)
    applied: dict[str, str] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    skipped: int = 0  # --conf properties outside the speculation families

    def describe(self) -> str:
        if not self.applied:
            return "Hadoop's defaults (no -D or --conf speculation setting)"
        given = ", ".join(f"{k}={v} ({self.origins[k]})" for k, v in self.applied.items())
        return f"{given}; everything else Hadoop's defaults"


def read_site_xml(path: str | Path) -> list[tuple[str, str, str]]:
    """``(name, value, "FILE:LINE")`` of each ``<property>`` of a Hadoop configuration file;
    bad XML or a property without a name is a HedgeError naming the file and line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise HedgeError(f"--conf {path}: cannot read it ({exc.strerror or exc})") from None
    out: list[tuple[str, str, str]] = []
    stack: list[str] = []
    current: dict[str, str] = {}
    text: list[str] = []
    parser = xml.parsers.expat.ParserCreate()

    def start(name: str, attrs: dict) -> None:
        stack.append(name)
        text.clear()
        if name == "property":
            current.clear()
            current["line"] = str(parser.CurrentLineNumber)

    def end(name: str) -> None:
        stack.pop()
        if stack[-1:] == ["property"] and name in ("name", "value"):
            current[name] = "".join(text).strip()
        elif name == "property":
            where = f"{path}:{current['line']}"
            if not current.get("name"):
                raise HedgeError(f"{where}: a <property> without a <name>")
            out.append((current["name"], current.get("value", ""), where))

    def entity(*_: object) -> None:
        raise HedgeError(f"{path}:{parser.CurrentLineNumber}: entity declarations are not "
                         "accepted in a configuration file")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text.append
    parser.EntityDeclHandler = entity
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as exc:
        raise HedgeError(f"{path}:{exc.lineno}: not well-formed XML "
                         f"({xml.parsers.expat.ErrorString(exc.code)}), expected a Hadoop "
                         "<configuration> of <property> elements") from None
    return out


def parse_define(text: str) -> tuple[str, str, str]:
    """``-D KEY=VALUE`` -> (key, value, origin)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise HedgeError(f"-D {text}: expected KEY=VALUE, e.g. -D mapreduce.map.speculative=false")
    return key.strip(), value.strip(), "-D"


def user_settings(conf: str | None, defines: tuple[str, ...] | list[str]) -> UserSettings:
    """The settings of a --conf file, then of each -D (later ones win, as Hadoop's -D over
    its site files)."""
    entries = read_site_xml(conf) if conf else []
    in_file = [(k, v, o) for k, v, o in entries if _in_family(k)]
    out = UserSettings(skipped=len(entries) - len(in_file))
    for key, value, origin in in_file + [parse_define(d) for d in defines]:
        _set(out, key, value, origin)
    return out


def _in_family(key: str) -> bool:
    return key in KNOWN or key.startswith(_FAMILIES)


def _set(out: UserSettings, key: str, value: str, origin: str) -> None:
    where = f"{origin} " if origin == "-D" else f"{origin}: "
    if key in IGNORED:
        out.warnings.append(f"{where}{key}: a real setting hedge does not model ({IGNORED[key]}); "
                            "ignored")
        return
    if key not in limits.PROPERTIES and key not in POLICY_PARAMS:
        close = difflib.get_close_matches(key, KNOWN, n=1, cutoff=0.8)
        if not close and not _in_family(key) and key.startswith(_HADOOPISH):
            out.warnings.append(f"{where}{key}: not a speculation setting; ignored")
            return
        hint = f"did you mean {close[0]}? " if close else ""
        raise HedgeError(f"{where}{key}: unknown speculation setting ({hint}hedge simulate "
                         f"takes: {', '.join(k for k in KNOWN if k not in IGNORED)})")
    if key in limits.PROPERTIES:
        out.speculation = limits.replace(out.speculation, {key: value}, where)
    for policy, (param, convert) in POLICY_PARAMS.get(key, {}).items():
        converted = convert(value)
        if converted is None:
            raise HedgeError(f"{where}{key} = {value!r}: expected {convert.expected}")
        out.policy_params.setdefault(policy, {})[param] = converted
        if key not in limits.PROPERTIES:
            out.policy_only.setdefault(policy, []).append(key)
    out.applied[key] = value
    out.origins[key] = origin
