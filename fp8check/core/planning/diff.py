"""`fp8check diff`: which layers change scheme, kernel or verdict between two vLLM rule profiles, and why.

Each profile is a set of changes (upstream PRs and changes read from the wheels: fp8check.core.targets.profiles).
The changes responsible for a layer's new outcome are found by ablation, not looked up: the layers that changed are
routed again under the newer profile with one change at a time put back as the older profile has it; a change is
responsible when that alone gives the layer a different outcome. When no single change does (two changes needed
together), every change between the profiles is named.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, NamedTuple

from fp8check.core.checkpoint.local import Checkpoint
from fp8check.core.errors import InputError
from fp8check.core.planning.rows import collapsed_name, without_index
from fp8check.core.records import InspectOptions, InspectReport
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.profiles import WHEEL_CHANGES, RuleProfile
from fp8check.core.vocabulary import layer_template


class RouteOutcome(NamedTuple):
    """What a layer becomes under one profile."""

    scheme: str
    kernel: str | None
    error: str | None                 # the first error, None when the layer loads

    @property
    def loads(self) -> bool:
        return self.error is None

    def text(self) -> str:
        route = f"{self.scheme} / {self.kernel or '-'}"
        return route if self.error is None else f"{route}: FAIL {' '.join(self.error.split())}"


class LayerChange(NamedTuple):
    name: str                         # collapsed across decoder blocks: model.layers.{0..63}.mlp.down_proj
    copies: int                       # the layers it stands for
    before: RouteOutcome
    after: RouteOutcome
    what: tuple[str, ...]             # "scheme", "kernel", "verdict"
    changes: tuple[int | str, ...]    # the profile changes responsible (PR numbers, wheel-change names)

    @property
    def stops_loading(self) -> bool:
        return self.before.loads and not self.after.loads


class DiffReport(NamedTuple):
    model: str
    platform: str
    tp: int
    ep: bool
    old: RuleProfile
    new: RuleProfile
    changes: tuple[LayerChange, ...]
    unchanged: int                    # modules (linear and FusedMoE) whose outcome is the same
    tp_sizes_ok: tuple[tuple[int, ...], tuple[int, ...]]  # before, after
    # Model-wide errors (vLLM's front door: method, platform allow-list, deprecation, capability), before, after
    model_errors: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    @property
    def ok(self) -> bool:
        """Exit 1 when a layer that loaded stops loading, or the model as a whole does."""
        before, after = self.model_errors
        return not any(c.stops_loading for c in self.changes) and not (after and not before)


def outcomes(report: InspectReport) -> dict[str, RouteOutcome]:
    return {layer.name: RouteOutcome(layer.scheme, layer.kernel, layer.errors[0] if layer.errors else None)
            for layer in report.layers + report.moes}


def profile_changes(old: RuleProfile, new: RuleProfile) -> tuple[int | str, ...]:
    """Every change on which the two profiles differ, in either direction."""
    prs = sorted(old.includes ^ new.includes)
    wheel = sorted(old.changes ^ new.changes)
    return tuple(prs) + tuple(wheel)


def toggled(profile: RuleProfile, change: int | str) -> RuleProfile:
    """`profile` with one change put back the other way (as the profile it is compared with has it)."""
    if isinstance(change, int):
        return profile._replace(includes=profile.includes ^ {change})
    return profile._replace(changes=profile.changes ^ {change})


def describe(change: int | str) -> str:
    """'PR #50787' / 'b12x (0.28 wheel)'."""
    if isinstance(change, int):
        return f"PR #{change}"
    return f"{change} ({WHEEL_CHANGES[change].split(':', 1)[0]})"


def restricted(ckpt: Checkpoint, module_names: set[str]) -> Checkpoint:
    """The checkpoint cut down to these modules' tensors: re-routing them costs a fraction of the whole model."""
    prefixes = tuple(f"{name}." for name in module_names)
    tensors = {name: info for name, info in ckpt.tensors.items() if name.startswith(prefixes)}
    return dataclasses.replace(ckpt, tensors=tensors, integrity_errors=())


def checkpoint_prefixes(report: InspectReport, names: set[str]) -> set[str]:
    """Module names as vLLM names them -> the checkpoint names their tensors start with (q/k/v of a qkv_proj)."""
    out: set[str] = set()
    for layer in report.layers + report.moes:
        if layer.name in names:
            out.update(layer.shards if layer.layer_type != "FusedMoE" else (layer.name,))
    return out


def responsible(run: Callable[[RuleProfile], dict[str, RouteOutcome]], old: RuleProfile, new: RuleProfile,
                names: set[str]) -> dict[str, tuple[int | str, ...]]:
    """Per layer, the changes that alone undo its outcome under `new` when set as `old` has them. The baseline is
    `run(new)` itself, so every comparison is between runs over the same (cut-down) checkpoint."""
    candidates = profile_changes(old, new)
    after = run(new)
    found: dict[str, list[int | str]] = {name: [] for name in names}
    for change in candidates:
        ablated = run(toggled(new, change))
        for name in names:
            if ablated.get(name) != after.get(name):
                found[name].append(change)
    return {name: tuple(changes) or candidates for name, changes in found.items()}


def diff(ckpt: Checkpoint, options: InspectOptions, old: RuleProfile, new: RuleProfile) -> DiffReport:
    if old.name == new.name:
        raise InputError(f"--from and --to both select the rule profile {old.name} (vLLM {old.vllm}): nothing to "
                         "compare; `fp8check rules` lists the profiles")
    before_report = inspect_checkpoint(ckpt, options._replace(profile=old))
    after_report = inspect_checkpoint(ckpt, options._replace(profile=new))
    before, after = outcomes(before_report), outcomes(after_report)
    changed = [name for name in after if before.get(name) != after[name]]
    # Identical modules across decoder blocks change alike: one representative per row is attributed.
    groups: dict[tuple, list[tuple[int | None, str]]] = {}
    for name in changed:
        template, index = layer_template(name)
        key = (template if index is not None else name, _strip(before[name], index), _strip(after[name], index))
        groups.setdefault(key, []).append((index, name))
    representatives = {members[0][1] for members in groups.values()}
    attributed: dict[str, tuple] = {}
    if representatives:
        subset = restricted(ckpt, checkpoint_prefixes(after_report, representatives))
        attributed = responsible(lambda p: outcomes(inspect_checkpoint(subset, options._replace(profile=p))),
                                 old, new, representatives)
    rows = []
    for (template, b, a), members in groups.items():
        name = collapsed_name(template, members)
        what = tuple(w for w, differs in (("scheme", b.scheme != a.scheme), ("kernel", b.kernel != a.kernel),
                                         ("verdict", b.loads != a.loads)) if differs) or ("error",)
        rows.append(LayerChange(name, len(members), before[members[0][1]], after[members[0][1]], what,
                                attributed[members[0][1]]))
    return DiffReport(ckpt.source, options.platform.label, options.tp, options.ep, old, new, tuple(rows),
                      len(after) - len(changed), (before_report.tp_sizes_ok, after_report.tp_sizes_ok),
                      (before_report.errors, after_report.errors))


def _strip(outcome: RouteOutcome, index: int | None) -> RouteOutcome:
    """Errors differ only by the block index across decoder blocks: compare them with it removed."""
    return outcome if outcome.error is None else outcome._replace(error=without_index(outcome.error, index))
