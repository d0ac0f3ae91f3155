"""Policy parameters by name, resolved one way for ``hedge serve`` and ``hedge simulate``.

A job names parameters in its configuration as ``hedge.<family>.<key>`` (``family``: the
policy name up to its first ``-``, so ``chronos-restart`` reads ``hedge.chronos.*``); ``hedge
simulate`` takes ``--policy <name>:<key>=<value>,<key>=<value>``. Either way ``<key>`` is the
keyword argument of the policy's ``__init__`` with dots or dashes for underscores
(``progress.standard`` = ``progress_standard``) or one of the policy's
:attr:`~hedge.policy.base.Policy.param_aliases` (``adaptive``'s ``alpha``), and the text takes
the type of the parameter's default. An unknown key or a bad value is one HedgeError naming it.

The keys of :data:`hedge.policy.limits.PROPERTIES` (``mapreduce.map.speculative``...) are no
policy's parameters: they are the job's speculation settings, which the shim sends along with
the parameters. They pass through :func:`policy_params` checked and typed, under their own
names, and :func:`split_settings` takes them out again.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping

from hedge.errors import HedgeError
from hedge.policy import limits, ranges
from hedge.policy.base import Policy, create, policy_class


def policy_family(name: str) -> str:
    """The configuration prefix family: ``chronos-restart`` -> ``chronos`` (hedge.chronos.*);
    hedge's own ``hedge-auto`` -> ``auto`` (hedge.auto.*). HedgeConf.paramPrefix is the Java
    side of this rule."""
    return name.removeprefix("hedge-").split("-", 1)[0]


def accepted_params(cls: type[Policy]) -> dict[str, object]:
    """Keyword parameters of a policy class and their defaults (``inspect.Parameter.empty``
    for none)."""
    signature = inspect.signature(cls.__init__)
    return {p.name: p.default for p in signature.parameters.values()
            if p.name != "self" and p.kind is p.POSITIONAL_OR_KEYWORD}


def _coerce(text: str, default: object, key: str) -> object:
    try:
        if isinstance(default, bool):
            if text.strip().lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            return text.strip().lower() in ("true", "1", "yes")
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float) or default is None:
            value = float(text)
            if math.isnan(value):  # float() takes "nan", and every comparison with it is False
                raise ValueError(text)
            return value
    except ValueError:
        kind = "true/false" if isinstance(default, bool) else type(default).__name__
        raise HedgeError(f"policy parameter '{key}' = {text!r}: expected a {kind} value") from None
    return text


def policy_params(name: str, raw: Mapping[str, str], create_fn: Callable[..., Policy] = create,
                  origin: str | None = None) -> dict[str, object]:
    """Keyword arguments for policy ``name`` from ``key -> text`` entries.

    ``origin`` prefixes each key in messages (default ``hedge.<family>.``, as a job's
    configuration names it; ``hedge simulate`` passes ``--policy <name>:``). Speculation
    settings (:data:`hedge.policy.limits.PROPERTIES`) pass through under their own names.
    ``create_fn`` is kept for callers that passed one; the class comes from the registry.
    """
    del create_fn
    cls = policy_class(name)
    accepted = accepted_params(cls)
    aliases = {a.replace(".", "_").replace("-", "_"): p for a, p in cls.param_aliases.items()}
    prefix = f"hedge.{policy_family(name)}." if origin is None else origin
    params: dict[str, object] = {}
    for key, text in raw.items():
        full = f"{prefix}{key}"
        if key in limits.PROPERTIES:
            params[key] = limits.parse_value(key, text, f"{prefix}")
            continue
        param = key.replace(".", "_").replace("-", "_")
        param = aliases.get(param, param)
        if param not in accepted:
            names = [p.replace("_", ".") for p in accepted] + sorted(cls.param_aliases)
            raise HedgeError(f"{full}: policy '{name}' has no parameter '{key}' (accepted: "
                             f"{', '.join(names) or 'none'})")
        default = accepted[param]
        params[param] = _coerce(str(text), None if default is inspect.Parameter.empty
                                else default, full)
        ranges.check(cls.param_ranges, param, params[param], full)
    return params


def split_settings(params: Mapping[str, object],
                   base: limits.SpeculationSettings | None = None,
                   ) -> tuple[limits.SpeculationSettings, dict[str, object]]:
    """(the speculation settings among ``params`` applied to ``base``, the policy's own
    keyword arguments)."""
    reserved = {k: v for k, v in params.items() if k in limits.PROPERTIES}
    own = {k: v for k, v in params.items() if k not in limits.PROPERTIES}
    settings = limits.replace(base or limits.SpeculationSettings(), reserved)
    return settings, own


def parse_policy_list(text: str, option: str = "--policy") -> list[tuple[str, dict[str, str]]]:
    """``none,adaptive:alpha=0.3,beta=0.2,hadoop`` -> ``[(name, {key: text}), ...]``.

    A comma-separated item with ``=`` and no ``:`` continues the parameters of the policy
    before it. Names and keys are checked by :func:`policy_params`, per policy.
    """
    out: list[tuple[str, dict[str, str]]] = []
    open_params = False  # the last item was name:params, so key=value items continue it
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if ":" in item:
            name, _, first = item.partition(":")
            out.append((name.strip(), {}))
            open_params = True
            if first.strip():
                _add_param(out[-1], first, option)
        elif "=" in item:
            if not open_params:
                raise HedgeError(f"{option} {text!r}: '{item}' is a parameter but no "
                                 "'name:' comes before it; expected NAME:KEY=VALUE,KEY=VALUE")
            _add_param(out[-1], item, option)
        else:
            out.append((item, {}))
            open_params = False
    return out


def _add_param(entry: tuple[str, dict[str, str]], item: str, option: str) -> None:
    name, raw = entry
    key, sep, value = item.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise HedgeError(f"{option} {name}:{item}: expected KEY=VALUE")
    raw[key.strip()] = value.strip()


def spec_text(name: str, raw: Mapping[str, str]) -> str:
    """The ``--policy`` form of one policy and its parameters: ``name`` or ``name:k=v,k=v``."""
    return name + (":" + ",".join(f"{k}={v}" for k, v in raw.items()) if raw else "")


def policy_spec(text: str, option: str = "--policy") -> tuple[str, dict[str, object]]:
    """One ``name[:key=value,...]`` -> (name, keyword arguments), checked."""
    entries = parse_policy_list(text, option)
    if len(entries) != 1:
        raise HedgeError(f"{option} {text!r}: expected one policy, got {len(entries)}")
    name, raw = entries[0]
    return name, policy_params(name, raw, origin=f"{option} {name}:")
