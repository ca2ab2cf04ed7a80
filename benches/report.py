#!/usr/bin/env python3
"""Turn pytest-benchmark and `futhark bench --json` files into benches/RESULTS.md tables.

Regenerate the generated part of benches/RESULTS.md (from the repository root; files that do not
exist are skipped with a note on stderr, so the glob may match nothing):

    PYTHONPATH=python .venv/bin/python benches/report.py benches/cpu.json benches/cpu-bonds.json benches/gpu.json \\
        benches/gpu-auto.json benches/gpu-options.json benches/gpu-small.json benches/gpu-bonds.json \\
        --futhark benches/futhark-*.json --update benches/RESULTS.md

Without --update the same tables go to stdout. With it, only the text between the lines
`<!-- report:begin -->` and `<!-- report:end -->` of the file is replaced; the rest is hand-written.

What is generated:

* one table per pytest-benchmark file (machine from its machine_info): median and spread (IQR) of
  each backend x target x precision x dataset, Gnode/s and options/s, the thesis' figures from
  the H100 measurements below (THESIS_H100_MS) beside ours, and the fastest backend per dataset and precision;
* per machine, `auto` against the best other backend of the same machine (all its files), with
  the ratio; rows where auto is more than 10% slower are flagged;
* one table per `futhark bench --json` file (`make futhark-bench BACKEND=cuda` writes
  benches/futhark-cuda.json): program, entry (main = f64, main32 = f32), dataset, median and
  min-max of the runtimes, Gnode/s, and for cuda/opencl the thesis' H100 kernel time. The backend
  is taken from the name futhark-BACKEND.json; the machine from --futhark-machine (once for all
  files, or once per file in order) or else from a sidecar text file futhark-BACKEND.machine
  next to the JSON (its first line). futhark bench times the entry point alone (input on the
  device), so these rows are not compared with the end-to-end pytest-benchmark rows.

Work (for Gnode/s) = trinom.model.work summed over a dataset's options, both passes, as
benches/conftest.py's node_updates: taken from the pytest-benchmark rows of the same dataset and
precision where present, else computed from data/NAME.in (--data), else left blank.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

#: Thesis kernels on the lent H100 (docs/anchors.md): best kernel ms, (f32, f64) of the better of CUDA-option / CUDA-multi.
THESIS_H100_MS = {
    "0_UNIFORM": (3.39, 6.18), "1_RAND": (194.1, 295.5), "2_RANDCONSTHEIGHT": (14.70, 22.95),
    "3_RANDCONSTWIDTH": (31.51, 52.09), "4_SKEWED": (19.27, 30.15), "5_SKEWEDCONSTHEIGHT": (14.85, 23.41),
    "6_SKEWEDCONSTWIDTH": (14.87, 23.35),
}
#: Sequential C++ pricer of the thesis on a 2-core machine of our kind (docs/anchors.md), seconds, float64.
THESIS_SEQ_S = {"0_UNIFORM_1000": 0.10, "1_RAND_1000": 2.48, "2_RANDCONSTHEIGHT_1000": 0.17, "3_RANDCONSTWIDTH_1000": 0.64}
#: futhark bench entry points of fut/bench-*.fut and their precision.
ENTRY_PRECISION = {"main": "f64", "main32": "f32"}
#: auto more than this much slower than the best other backend is flagged.
AUTO_TOLERANCE = 1.10
BEGIN, END = "<!-- report:begin -->", "<!-- report:end -->"
DATA = Path(__file__).resolve().parent.parent / "data"


# --- pytest-benchmark ------------------------------------------------------------------------------------------------

def parse_params(bench: dict) -> dict[str, str]:
    """backend, target, dataset, precision of one benchmark row."""
    params = dict(bench.get("params") or {})
    name = params.pop("name", "reference")  # the reference benchmark has no backend parameter
    target = params.pop("target", None)
    return {"backend": name, "target": target or "-", "dataset": params.get("data", "?"),
            "precision": params.get("precision", "?")}


def machine_label(info: dict) -> str:
    """One line naming the machine of a pytest-benchmark file."""
    cpu = info.get("cpu", {}).get("brand_raw") or info.get("processor") or "?"
    cores = info.get("cpu", {}).get("count", "?")
    gpu = f", GPU {info['gpu']}" if info.get("gpu") else ""
    return f"{cpu}, {cores} cores{gpu}, Python {info.get('python_version', '?')}"


def rows_of(path: Path) -> tuple[str, dict, list[dict]]:
    """Machine label, run facts (date, commit) and one dict per benchmark of a pytest-benchmark JSON file."""
    data = json.loads(path.read_text())
    rows = []
    for bench in data["benchmarks"]:
        meta = parse_params(bench)
        stats, extra = bench["stats"], bench.get("extra_info", {})
        meta.update(median_ms=stats["median"] * 1e3, iqr_ms=stats["iqr"] * 1e3, rounds=stats["rounds"],
                    gnodes=extra.get("gnodes_per_s"), options_per_s=extra.get("options_per_s"),
                    node_updates=extra.get("node_updates"), picked=extra.get("picked", ""), source=path.name)
        rows.append(meta)
    run = {"datetime": data.get("datetime", "?")[:19].replace("T", " "), "commit": data.get("commit_info", {}).get("id", "?"),
           "gpu": bool(data.get("machine_info", {}).get("gpu"))}
    return machine_label(data.get("machine_info", {})), run, rows


def thesis_column(dataset: str, precision: str) -> str:
    """The thesis figure of a dataset and precision, with what it is, or ''."""
    if dataset in THESIS_H100_MS and precision in ("f32", "f64"):
        return f"{THESIS_H100_MS[dataset][0 if precision == 'f32' else 1]:.2f} ms (H100 kernel)"
    if dataset in THESIS_SEQ_S and precision == "f64":
        return f"{THESIS_SEQ_S[dataset] * 1e3:.0f} ms (seq. C++)"
    return ""


def against_thesis(dataset: str, precision: str, median_ms: float, gpu: bool) -> str:
    """Ours against the thesis on the same kind of machine: the H100 kernel on a GPU machine, the sequential C++ on the CPU."""
    if gpu and dataset in THESIS_H100_MS:
        thesis = THESIS_H100_MS[dataset][0 if precision == "f32" else 1]
    elif not gpu and dataset in THESIS_SEQ_S and precision == "f64":
        thesis = THESIS_SEQ_S[dataset] * 1e3
    else:
        return ""
    ratio = thesis / median_ms
    return f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower"


def backend_label(r: dict) -> str:
    """backend/target, or the backend alone when it has no target."""
    return r["backend"] if r["target"] == "-" else f"{r['backend']}/{r['target']}"


def best_per_dataset(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """The fastest row per (dataset, precision)."""
    best: dict[tuple[str, str], dict] = {}
    for r in rows:
        key = (r["dataset"], r["precision"])
        if key not in best or r["median_ms"] < best[key]["median_ms"]:
            best[key] = r
    return best


def benchmark_section(path: Path, label: str, run: dict, rows: list[dict]) -> list[str]:
    """The table of one pytest-benchmark file and its fastest-backend table."""
    out = [f"### {label}", "", f"`{path}`, run {run['datetime']} UTC, commit {run['commit']}.", "",
           "| backend | target | precision | dataset | median ms | IQR ms | rounds | Gnode/s | options/s | thesis |",
           "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in sorted(rows, key=lambda r: (r["dataset"], r["precision"], r["backend"], r["target"])):
        gn = f"{r['gnodes']:.3f}" if r["gnodes"] is not None else ""
        ops = f"{r['options_per_s']:.4g}" if r["options_per_s"] is not None else ""
        out.append(f"| {r['backend']} | {r['target']} | {r['precision']} | {r['dataset']} | {r['median_ms']:.3f} | "
                   f"{r['iqr_ms']:.3f} | {r['rounds']} | {gn} | {ops} | {thesis_column(r['dataset'], r['precision'])} |")
    out += ["", "Fastest backend per dataset and precision in this file:", "",
            "| dataset | precision | backend | median ms | vs thesis |", "| --- | --- | --- | ---: | ---: |"]
    for (dataset, precision), r in sorted(best_per_dataset(rows).items()):
        vs = against_thesis(dataset, precision, r["median_ms"], run["gpu"])
        out.append(f"| {dataset} | {precision} | {backend_label(r)} | {r['median_ms']:.3f} | {vs} |")
    return [*out, ""]


def auto_rows(rows: list[dict]) -> list[dict]:
    """Per (dataset, precision) with an auto row: auto's fastest median, the fastest other backend and their ratio."""
    autos: dict[tuple[str, str], dict] = {}
    others: dict[tuple[str, str], dict] = {}
    for r in rows:
        table = autos if r["backend"] == "auto" else others
        key = (r["dataset"], r["precision"])
        if key not in table or r["median_ms"] < table[key]["median_ms"]:
            table[key] = r
    result = []
    for key in sorted(autos):
        a, b = autos[key], others.get(key)
        ratio = a["median_ms"] / b["median_ms"] if b else None
        result.append({"dataset": key[0], "precision": key[1], "auto": a, "best": b, "ratio": ratio,
                       "flag": ratio is not None and ratio > AUTO_TOLERANCE})
    return result


def auto_section(label: str, rows: list[dict]) -> list[str]:
    """auto against the best other backend on one machine (all its pytest-benchmark files)."""
    out = [f"### auto against the best backend: {label}", ""]
    table = auto_rows(rows)
    if not table:
        return [*out, "No `auto` rows measured on this machine.", ""]
    out += ["| dataset | precision | auto ms | auto picked | best other ms | best other | ratio | over 10% |",
            "| --- | --- | ---: | --- | ---: | --- | ---: | --- |"]
    for t in table:
        a, b = t["auto"], t["best"]
        picked = a["picked"] or "(not recorded)"
        best = f"{backend_label(b)} ({b['source']})" if b else "none measured"
        best_ms = f"{b['median_ms']:.3f}" if b else ""
        ratio = f"{t['ratio']:.2f}" if t["ratio"] is not None else ""
        out.append(f"| {t['dataset']} | {t['precision']} | {a['median_ms']:.3f} ({a['source']}) | {picked} | {best_ms} | "
                   f"{best} | {ratio} | {'**yes**' if t['flag'] else 'no'} |")
    flagged = sum(t["flag"] for t in table)
    out += ["", f"{flagged} of {len(table)} rows more than 10% slower than the best other backend." if flagged
            else f"All {len(table)} rows within 10% of the best other backend.", ""]
    return out


# --- futhark bench ---------------------------------------------------------------------------------------------------

def futhark_backend(path: Path) -> str:
    """cuda for futhark-cuda.json; the file's stem for any other name."""
    match = re.fullmatch(r"futhark-(.+)\.json", path.name)
    return match.group(1) if match else path.stem


def futhark_machine(path: Path, given: str | None) -> str:
    """The machine of a futhark bench file: the text given, else the sidecar futhark-BACKEND.machine, else a note."""
    if given:
        return given
    sidecar = path.with_suffix(".machine")
    if sidecar.exists():
        lines = sidecar.read_text().strip().splitlines()
        if lines:
            return lines[0].strip()
    return "machine not recorded (give --futhark-machine or a .machine file)"


def futhark_rows(path: Path) -> list[dict]:
    """One dict per program x entry x dataset of a `futhark bench --json` file (runtimes in µs)."""
    data = json.loads(path.read_text())
    rows = []
    for key, program in data.items():
        file, _, entry = key.partition(":")
        entry = entry or "main"  # futhark names the default entry point by the file alone
        stem = Path(file).stem
        name = "futhark-" + stem.removeprefix("bench-") if stem.startswith("bench-") else stem
        for dataset, result in program.get("datasets", {}).items():
            runtimes = result.get("runtimes") or []
            if not runtimes:
                continue
            ms = [t / 1e3 for t in runtimes]
            rows.append({"program": name, "entry": entry, "precision": ENTRY_PRECISION.get(entry, "?"),
                         "dataset": dataset_name(dataset), "median_ms": statistics.median(ms), "min_ms": min(ms),
                         "max_ms": max(ms), "runs": len(ms)})
    return rows


def dataset_name(dataset: str) -> str:
    """data/NAME.in (as futhark bench names a file dataset) -> NAME; other descriptions unchanged."""
    path = Path(dataset)
    return path.stem if path.suffix == ".in" else dataset


class Work:
    """Node updates of a dataset and precision: from benchmark rows, else from data/NAME.in, cached."""

    def __init__(self, rows: Sequence[dict] = (), data: Path = DATA) -> None:
        self.known = {(r["dataset"], r["precision"]): r["node_updates"] for r in rows if r.get("node_updates")}
        self.data = data

    def __call__(self, dataset: str, precision: str) -> float | None:
        key = (dataset, precision)
        if key not in self.known:
            self.known[key] = self.compute(dataset, precision)
        return self.known[key]

    def compute(self, dataset: str, precision: str) -> float | None:
        path = self.data / f"{dataset}.in"
        if precision not in ("f32", "f64") or not path.exists():
            return None
        import numpy as np
        from trinom import io
        from trinom.lattice.geometry import work

        portfolio, _curve = io.read_input(path)
        g = portfolio.geometry(np.float32 if precision == "f32" else np.float64)
        return float(work(g.n, g.jmax).sum())


def futhark_section(path: Path, machine: str, rows: list[dict], work: Work) -> list[str]:
    """The table of one futhark bench file."""
    backend = futhark_backend(path)
    gpu = backend in ("cuda", "opencl")
    out = [f"### `futhark bench --backend={backend}`: {machine}", "",
           f"`{path}`: runtime of the entry point alone (input already on the device, result synchronised, "
           "no host transfers); median and min-max over the runs.", ""]
    head = "| program | entry | dataset | median ms | min-max ms | runs | Gnode/s |"
    rule = "| --- | --- | --- | ---: | ---: | ---: | ---: |"
    if gpu:
        head, rule = head + " thesis H100 kernel ms | vs thesis |", rule + " ---: | ---: |"
    out += [head, rule]
    for r in sorted(rows, key=lambda r: (r["dataset"], r["program"], r["precision"])):
        w = work(r["dataset"], r["precision"])
        gn = f"{w / r['median_ms'] / 1e6:.3f}" if w else ""
        line = (f"| {r['program']} | {r['entry']} ({r['precision']}) | {r['dataset']} | {r['median_ms']:.3f} | "
                f"{r['min_ms']:.3f}-{r['max_ms']:.3f} | {r['runs']} | {gn} |")
        if gpu:
            thesis = THESIS_H100_MS.get(r["dataset"])
            if thesis and r["precision"] in ("f32", "f64"):
                ms = thesis[0 if r["precision"] == "f32" else 1]
                line += f" {ms:.2f} | {against_thesis(r['dataset'], r['precision'], r['median_ms'], True)} |"
            else:
                line += "  |  |"
        out.append(line)
    if not rows:
        out.append("(no timed datasets in this file)")
    return [*out, ""]


# --- the document ----------------------------------------------------------------------------------------------------

#: The command that regenerates RESULTS.md's generated part (also in the module docstring).
COMMAND = ("PYTHONPATH=python .venv/bin/python benches/report.py benches/cpu.json benches/cpu-bonds.json benches/gpu.json "
           "benches/gpu-auto.json benches/gpu-options.json benches/gpu-small.json benches/gpu-bonds.json "
           "--futhark benches/futhark-*.json --update benches/RESULTS.md")


def markdown(paths: Sequence[Path], futhark: Sequence[tuple[Path, str]] = (), data: Path = DATA) -> str:
    """The generated tables: pytest-benchmark files, auto against the best per machine, futhark bench files."""
    inputs = ", ".join(f"`{p}`" for p in [*paths, *(p for p, _ in futhark)]) or "none"
    out = ["## Generated tables", "",
           f"Generated by benches/report.py from {inputs}; regenerate with `{COMMAND}`. "
           "Do not edit by hand between the markers.",
           "pytest-benchmark rows: medians over the rounds shown, end to end from Python (host arrays in, prices out); "
           "IQR is the spread. Gnode/s uses the work metric of docs/model.md §1.11 (both passes).", ""]
    by_machine: dict[str, list[dict]] = defaultdict(list)
    all_rows: list[dict] = []
    for path in paths:
        label, run, rows = rows_of(path)
        by_machine[label].extend(rows)
        all_rows.extend(rows)
        out += benchmark_section(path, label, run, rows)
    if by_machine:
        out += ["## auto against the best backend", "",
                "Per machine, over all its pytest-benchmark files: auto's median against the fastest other backend "
                "measured on the same dataset and precision (file in brackets). Ratio = auto / best; "
                f"rows where auto is more than {AUTO_TOLERANCE - 1:.0%} slower are flagged.", ""]
        for label, rows in by_machine.items():
            out += auto_section(label, rows)
    out += ["## futhark bench", ""]
    if not futhark:
        out += ["No `futhark bench --json` file given (`make futhark-bench BACKEND=...` writes benches/futhark-BACKEND.json); "
                "the figures measured so far are in [RESULTS-futhark.md](RESULTS-futhark.md).", ""]
    work = Work(all_rows, data)
    for path, machine in futhark:
        out += futhark_section(path, machine, futhark_rows(path), work)
    return "\n".join(out).rstrip("\n") + "\n"


def replace_generated(text: str, block: str) -> str:
    """text with everything between the BEGIN and END marker lines replaced by block; the rest unchanged."""
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < 0 or end < begin:
        raise ValueError(f"markers {BEGIN} ... {END} not found (in order)")
    start = begin + len(BEGIN)
    return text[:start] + "\n" + block.rstrip("\n") + "\n" + text[end:]


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", nargs="*", type=Path, help="pytest-benchmark JSON files")
    parser.add_argument("--futhark", nargs="+", type=Path, default=[], metavar="FILE",
                        help="futhark bench --json files, named futhark-BACKEND.json")
    parser.add_argument("--futhark-machine", action="append", default=[], metavar="TEXT",
                        help="machine of the futhark files: once for all, or once per file in order")
    parser.add_argument("--data", type=Path, default=DATA, help="directory of NAME.in for the work of futhark datasets")
    parser.add_argument("--update", type=Path, metavar="MD", help="replace the generated part of this file")
    args = parser.parse_args(argv)

    def existing(paths: list[Path]) -> list[Path]:
        for p in paths:
            if not p.exists():
                print(f"report.py: {p} does not exist, skipped", file=sys.stderr)
        return [p for p in paths if p.exists()]

    futhark_paths = existing(args.futhark)
    machines = args.futhark_machine
    if len(machines) not in (0, 1, len(args.futhark)):
        parser.error("give --futhark-machine once, or once per --futhark file")
    if len(machines) == len(args.futhark) and len(machines) > 1:
        given = dict(zip(args.futhark, machines, strict=True))
    else:
        given = dict.fromkeys(args.futhark, machines[0] if machines else None)
    futhark = [(p, futhark_machine(p, given[p])) for p in futhark_paths]
    block = markdown(existing(args.json), futhark, args.data)
    if args.update:
        args.update.write_text(replace_generated(args.update.read_text(), block))
        print(f"report.py: updated the generated part of {args.update}", file=sys.stderr)
    else:
        print("# Benchmark results\n\n" + block, end="")


if __name__ == "__main__":
    main()
