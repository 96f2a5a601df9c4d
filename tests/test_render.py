"""The text renderers (issue 20): at the terminal widths people use, no module, class or platform name is ever
split or cut, no line runs past the terminal, and every name is still there; `wide` adds columns, never rows."""

from __future__ import annotations

import io
import os

import pytest
from rich.console import Console

from fp8check.cli import render
from fp8check.cli.render import inspect as render_inspect
from fp8check.cli.render import planning as render_planning
from fp8check.cli.render import reference as render_reference
from fp8check.cli.render import tables as render_tables
from fp8check.core.checkpoint.source import open_checkpoint
from fp8check.core.planning.diff import diff
from fp8check.core.planning.kernel_matrix import kernel_matrix
from fp8check.core.planning.matrix import matrix
from fp8check.core.planning.rows import collapse, collapse_attention, collapse_attention_runs
from fp8check.core.planning.suggest import suggest
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import PROFILES, PULL_REQUESTS, WHEEL_CHANGES, select_profile
from fp8check.kernels.base import RoutingContext

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "tiny-qwen3-fp8-block")
WIDTHS = [80, 100, 120, 200]
# Llama-4 with its vision tower: the longest module names vLLM builds (73 characters), FusedMoE layers too.
LLAMA4_VISION = dict(architecture="Llama4ForConditionalGeneration", model_type="llama4", moe_style="llama4",
                     shared_experts=1, experts=4, head_dim=128, text_prefix="language_model.model", vision="llama4",
                     ignore=("language_model.lm_head",))
_CPU = parse_platform("cpu")
NO_AMX = _CPU._replace(assumptions=_CPU.assumptions._replace(cpu_amx=False))  # vLLM's CPU kernels refuse it
CPU_HOST = NO_AMX._replace(label="auto: cpu")  # what --platform auto detects on a host without an accelerator


def rendered(draw, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, highlight=False, force_terminal=False)
    draw(console)
    return console.export_text()


def assert_whole(text: str, names, width: int) -> None:
    lines = text.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width
    assert "…" not in text  # rich's mark of a cut cell
    for name in names:
        assert any(name in line for line in lines), f"{name!r} is split or missing at {width} columns:\n{text}"


def inspected(folder: str, platform, tp: int = 1, vllm: str = "latest"):
    ckpt = open_checkpoint(folder)
    options = InspectOptions(parse_platform(platform) if isinstance(platform, str) else platform,
                             select_profile(vllm), tp=tp)
    report = inspect_checkpoint(ckpt, options)
    return report._replace(suggestions=suggest(report, ckpt, options)) if not report.ok else report


def report_names(report, attention: bool = True) -> set[str]:
    """Every name an inspect table must show whole: collapsed modules, schemes, kernels, experts classes and (with
    `attention`) collapsed attention layers, their KV cache methods and attention backends."""
    names = {row.name for row in collapse(report.layers + report.moes)}
    names |= {entry.scheme for entry in report.layers + report.moes if entry.scheme != "?"}
    if attention:
        names |= {row.name for row in collapse_attention(report.attention)}
        names |= {entry.kv_method for entry in report.attention if entry.kv_method}
        names |= {entry.backend for entry in report.attention if entry.backend}
    return names | {entry.kernel for entry in report.layers + report.moes if entry.kernel}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("case", ["example-h100-tp2", "example-cpu-host", "example-xpu-tp3", "llama4-vision-h100"])
def test_inspect_never_splits_a_name(make_checkpoint, case, wide, width):
    if case == "llama4-vision-h100":
        report = inspected(make_checkpoint(**LLAMA4_VISION), "h100", tp=2)
        assert len(max(report_names(report), key=len)) > 70 and report.moes
    else:
        platform, tp = {"example-h100-tp2": ("h100", 2), "example-cpu-host": (CPU_HOST, 1),
                        "example-xpu-tp3": ("xpu", 3)}[case]
        report = inspected(EXAMPLE, platform, tp)
    text = rendered(lambda console: render.table(report, console, False, None, wide), width)
    shapes = {render_inspect.dims(entry.shape) for entry in report.layers + report.moes}
    assert_whole(text, report_names(report) | shapes, width)  # a shape never breaks across lines
    if wide:
        assert "RowParallelLinear" in text and "activation key" in " ".join(text.split())
    # --wide names scheme and kernel in columns: no route column, no numbered routes saying the same
    assert ("scheme → kernel" in " ".join(text.split())) is not wide
    assert any(line.startswith("[1]") for line in text.splitlines()) is not wide


def test_default_inspect_fits_100_columns_as_one_table_that_leads_with_the_routes():
    report = inspected(EXAMPLE, "h100", tp=2)
    text = rendered(lambda console: render.table(report, console, False), 100)
    routes = text.index("CompressedTensorsW8A8Fp8 → FlashInferFp8DeepGEMMDynamicBlockScaledKernel")
    assert routes < text.index("model.layers.{0..1}.mlp.down_proj")
    assert "8 linear" in text  # how many layers take the route
    row = next(line for line in text.splitlines() if line.startswith("model.layers.{0..1}.mlp.down_proj"))
    assert "F8_E4M3 256×512" in row and "block 128×128" in row and row.rstrip().endswith("ok")
    assert "RowParallelLinear" not in text  # the parallel type is --wide's


@pytest.mark.parametrize("width", WIDTHS)
def test_load_never_splits_a_name(width):
    from fp8check.core.checkpoint.source import weights_fetcher
    from fp8check.core.load.driver import load_checkpoint
    from fp8check.core.records import LoadOptions

    torch = pytest.importorskip("torch")
    ckpt = open_checkpoint(EXAMPLE)
    options = InspectOptions(parse_platform("xpu"), select_profile("0.27"))
    fetch = weights_fetcher(EXAMPLE, quiet=True)
    report = load_checkpoint(ckpt, fetch, LoadOptions(options, torch.device("cpu")), None)
    text = rendered(lambda console: render.table(report, console, False), width)
    kv_rows = {row.name for row in collapse_attention_runs(report.attention_runs)}  # load shows its KV round trips
    assert_whole(text, report_names(report.inspect, attention=False) - {"XPUFp8BlockScaledMMKernel"} | kv_rows, width)
    # a layer vLLM refuses is named by its scheme, not mistaken for an unquantized one (issue 20, item 1)
    assert "CompressedTensorsW8A16Fp8 → not run: vLLM refuses it" in " ".join(text.split())
    assert "unquantized → -" not in text


@pytest.mark.parametrize("width", WIDTHS)
def test_matrix_and_diff_never_split_a_name(width):
    ckpt = open_checkpoint(EXAMPLE)
    options = InspectOptions(parse_platform("xpu"), select_profile("latest"), tp=2)
    grid = matrix(ckpt, options, [parse_platform(p) for p in ("xpu", "h100", "a100", "l40s", "mi300x")], [1, 2, 4, 8])
    text = rendered(lambda console: render_planning.matrix_table(grid, console), width)
    assert_whole(text, {c.platform for c in grid.cells} | {k for c in grid.cells for k in c.kernels}, width)
    assert " ".join(text.split()).count("must be divisible by tensor parallel size (8)") == 1  # once, numbered
    changes = diff(ckpt, options, select_profile("0.27"), options.profile)
    text = rendered(lambda console: render_planning.diff_table(changes, console), width)
    assert_whole(text, {c.name for c in changes.changes} | {"CompressedTensorsW8A16Fp8", "XPUFp8BlockScaledMMKernel"},
                 width)


@pytest.mark.parametrize("width", WIDTHS)
def test_kernels_and_rules_never_split_a_name(width):
    ctx = RoutingContext(parse_platform("h100"), select_profile("latest"), frozenset())
    tables = kernel_matrix(ctx)
    text = rendered(lambda console: render_reference.kernels_table(ctx, tables, console), width)
    assert_whole(text, {row.kernel for table in tables for row in table.rows}, width)
    text = rendered(render_reference.rules_table, width)
    assert_whole(text, set(WHEEL_CHANGES) | {f"#{pr}" for pr in PULL_REQUESTS} | {p.name for p in PROFILES}, width)


def test_matrix_verdict_names_each_tp_list_once():
    ckpt = open_checkpoint(EXAMPLE)
    options = InspectOptions(parse_platform("xpu"), select_profile("latest"))
    grid = matrix(ckpt, options, [parse_platform(p) for p in ("xpu", "h100", "mi300x")], [1, 2, 4, 8])
    from fp8check.core.report.verdicts import matrix_verdict

    assert matrix_verdict(grid) == ("OK: 9 of 12 platform x TP cells load (vLLM 0.34): TP 1, 2, 4 on xpu, "
                                    "h100 (cuda:90), mi300x (rocm:gfx942)")


@pytest.mark.parametrize("model,shown", [(EXAMPLE, EXAMPLE), ("/models/my model", "'/models/my model'"),
                                         ("org/Model-FP8", "org/Model-FP8")])
def test_a_cpu_host_says_so_first_and_names_the_targets_once_last(model, shown):
    report = inspected(EXAMPLE, CPU_HOST)._replace(model=model)
    lines = [line.strip() for line in rendered(lambda console: render.table(report, console, False),
                                               100).splitlines()]
    text = " ".join(" ".join(lines).split())
    top = text.index("auto is this host, which has no accelerator")
    assert top < text.index("route ") and "cpu (this host, --platform auto)" in text
    assert text.rstrip().endswith("to check the target you mean: -p xpu, -p h100, -p mi300x (any other target: "
                                  f"fp8check matrix {shown})")
    assert text.count("-p xpu, -p h100, -p mi300x") == 1  # the hint once, at the end
    assert "platform=auto: cpu" not in text and "on auto: cpu" not in text


@pytest.mark.parametrize("label,text,cpu_host", [
    ("auto: cpu", "cpu (this host, --platform auto)", True),
    ("device: cpu", "cpu (from --device)", True),
    ("cpu", "cpu", False),
    ("h100 (cuda:90)", "h100 (cuda:90)", False),
])
def test_one_reader_of_a_platform_label_for_the_verdicts_and_the_cpu_host_hint(label, text, cpu_host):
    from fp8check.core.report.verdicts import platform_text

    platform = (NO_AMX if label.endswith("cpu") else parse_platform("h100"))._replace(label=label)
    assert platform_text(platform) == text
    assert render_tables._cpu_host(platform) is cpu_host


def test_vllms_doubled_period_is_one_for_people_and_kept_in_the_report():
    report = inspected(EXAMPLE, NO_AMX)
    text = rendered(lambda console: render.table(report, console, False), 200)
    assert "(Sapphire Rapids or newer).." in report.layers[1].errors[0]  # vLLM's own text, as the JSON has it
    assert "(Sapphire Rapids or newer)." in text and "(Sapphire Rapids or newer).." not in text


def test_rows_with_the_same_error_print_it_once():
    report = inspected(EXAMPLE, NO_AMX)
    text = rendered(lambda console: render.table(report, console, False), 200)
    assert text.count("Failed to find a kernel that can implement the ScaledMM linear layer") == 1


def test_the_header_names_the_release_once():
    report = inspected(EXAMPLE, "h100", vllm="0.33")
    text = rendered(lambda console: render.table(report, console, False), 200)
    assert "vLLM 0.33," in text and "(0.33)" not in text and "vllm=" not in text


def test_env_prints_yes_no_and_dash_like_every_other_command():
    from fp8check.core.targets.envinfo import Probe

    probes = [Probe("platform", True, None, {"capability": None, "assumptions": {"cpu_amx": False, "x": True}})]
    text = rendered(lambda console: render_reference.env_table(probes, console), 100)
    assert "capability=-" in text and "{cpu_amx=no, x=yes}" in text
    assert "None" not in text and "False" not in text and "True" not in text


@pytest.mark.parametrize("width", WIDTHS)
def test_no_line_ends_in_a_space(make_checkpoint, width):
    """rich pads table cells and wrapped messages to their width: none of it reaches a log."""
    report = inspected(make_checkpoint(**LLAMA4_VISION), CPU_HOST._replace(assumptions=_CPU.assumptions), tp=2)
    ckpt = open_checkpoint(EXAMPLE)
    options = InspectOptions(parse_platform("xpu"), select_profile("latest"), tp=2)
    grid = matrix(ckpt, options, [parse_platform(p) for p in ("xpu", "h100")], [1, 2, 8])
    ctx = RoutingContext(parse_platform("h100"), select_profile("latest"), frozenset())
    for draw in (lambda console: render.table(report, console, True, None, False),
                 lambda console: render.table(report, console, True, None, True),
                 lambda console: render_planning.matrix_table(grid, console, True),
                 lambda console: render_planning.diff_table(diff(ckpt, options, select_profile("0.27"),
                                                                 options.profile), console),
                 lambda console: render_reference.kernels_table(ctx, kernel_matrix(ctx), console),
                 render_reference.rules_table):
        text = rendered(draw, width)
        assert text.strip() and [line for line in text.splitlines() if line.endswith(" ")] == []


def test_a_load_table_shows_a_dash_for_the_time_and_bytes_of_a_module_not_run():
    from fp8check.core.checkpoint.source import weights_fetcher
    from fp8check.core.load.driver import load_checkpoint
    from fp8check.core.records import LoadOptions

    torch = pytest.importorskip("torch")
    options = InspectOptions(parse_platform("xpu"), select_profile("0.27"))
    report = load_checkpoint(open_checkpoint(EXAMPLE), weights_fetcher(EXAMPLE, quiet=True),
                             LoadOptions(options, torch.device("cpu")), None)
    for wide in (False, True):
        lines = rendered(lambda console: render.table(report, console, False, None, wide), 200).splitlines()
        refused = next(line.split() for line in lines if line.startswith("model.layers.{0..1}.mlp.down_proj"))
        assert refused[-2:] == ["not", "run"] and "0.0" not in refused
        # errors, ms and MB; --wide: the kernel and numerics too, and the scheme in place of the route's number
        assert refused.count("-") == (6 if wide else 4) and ("CompressedTensorsW8A16Fp8" in refused) is wide


def test_matrix_says_once_how_to_give_an_unknown_device_memory():
    ckpt = open_checkpoint(EXAMPLE)
    options = InspectOptions(parse_platform("xpu"), select_profile("latest"))
    grid = matrix(ckpt, options, [parse_platform(p) for p in ("xpu", "a100", "h100")], [1, 2])
    for text in (" ".join(rendered(lambda console: render_planning.matrix_table(grid, console), 100).split()),
                 render_planning.matrix_markdown(grid)):
        assert text.count("1.0 MiB / ?") == 2 and "1.0 MiB / 80.0 GiB" in text  # xpu and a100 at TP 2; h100 known
        # (the whole 80 GiB: 0.34's extensible KV cache takes gpu_memory_utilization 1.0 on CUDA)
        assert text.count("--assume device_memory=80GiB") == 1
        assert "? : the device memory of xpu, a100 (cuda:80) is unknown" in text


@pytest.mark.parametrize("reason,line", [
    ("Total number  of heads\n(4) must be divisible.", "Total number of heads (4) must be divisible."),
    ("  a\tb  ", "a b"),
    (None, ""),
])
def test_a_matrix_reason_is_one_line_with_single_spaces(reason, line):
    assert render_planning._first_line(reason) == line
