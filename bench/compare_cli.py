#!/usr/bin/env python3
"""Side by side: the numpy reference and `slo report`, each as a whole process, alternately.

    python3 bench/compare_cli.py target/bench/requests_1m.csv [--runs 5] [--slo target/cli/slo] [--pause 0]

Each run starts a fresh process (interpreter start, imports, reading the file, output are all
part of what a user waits for). The two commands alternate, so that a machine that gets busier
or quieter during the benchmark affects both alike. Reported: the median wall time of each, the
ratio of the medians, median CPU time (user + system) and peak memory (max RSS) per process.

`slo` computes what the reference computes, overall and per class: its spec
(bench/classes_spec.json) groups requests by the log's `class` column (chat, code, batch: the
classes bench/gen_requests.py writes; for a log with other classes, edit the spec, or the
check below reports the difference).
Then both answers are checked against each other, overall and for each class: joint
attainment, and p90 of TTFT, TPOT and E2E by numpy's linear and nearest methods. The exit
status is 1 if they differ.

--pause S waits S seconds before every process. On a VM that hands free memory back to its
host (free page reporting, docs/performance.md, twelfth round) a process started after a
pause of 2 s or more writes into memory the host must back again, as a CI gate run after a
quiet spell would; without a pause each process finds the memory the one before it freed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, out_path):
    """Runs `cmd` with stdout to `out_path`; returns (wall s, cpu s, max RSS MiB)."""
    with open(out_path, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)} (exit {os.waitstatus_to_exitcode(status)})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def close(a, b):
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--slo", default="target/cli/slo", help="the slo binary (cargo build --profile cli -p slo-cli)")
    ap.add_argument("--ttft", type=float, default=500.0)
    ap.add_argument("--tpot", type=float, default=50.0)
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--pause", type=float, default=0.0, help="seconds to wait before each process (default 0)")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="slo-bench-")
    ref_out, slo_out = os.path.join(tmp, "reference.json"), os.path.join(tmp, "slo.json")
    reference = [sys.executable, os.path.join(HERE, "reference_report.py"), a.file,
                 "--ttft", str(a.ttft), "--tpot", str(a.tpot), "--json"]
    # Per class, as the reference reports: the spec groups by the `class` column.
    slo = [a.slo, "report", "--spec", os.path.join(HERE, "classes_spec.json"),
           "--ttft", f"{a.ttft:g}", "--tpot", f"{a.tpot:g}",
           "--percentiles", "50,90,99", "--format", "json", a.file]
    print(f"file: {a.file} ({os.path.getsize(a.file) / 1e6:.1f} MB)")
    print(f"reference: python3 bench/reference_report.py FILE --json   (pandas.read_csv + numpy)")
    shown = [os.path.relpath(x) if x.endswith(".json") else x for x in slo[:-1]]
    print(f"slo:       {' '.join(shown)} FILE")
    times = {"reference": [], "slo": []}
    for k in range(a.runs):
        for name, cmd, out in (("reference", reference, ref_out), ("slo", slo, slo_out)):
            time.sleep(a.pause)
            times[name].append(run(cmd, out))
        r, s = times["reference"][-1], times["slo"][-1]
        print(f"  run {k + 1}: reference {r[0] * 1e3:7.0f} ms   slo {s[0] * 1e3:6.0f} ms   {r[0] / s[0]:4.1f}x")

    med = {name: [statistics.median(t[i] for t in runs) for i in range(3)] for name, runs in times.items()}
    ratio = med["reference"][0] / med["slo"][0]
    print()
    print(f"{'':10} {'wall (median)':>14} {'cpu (median)':>13} {'max RSS':>10}")
    for name in ("reference", "slo"):
        w, c, m = med[name]
        print(f"{name:10} {w * 1e3:11.0f} ms {c * 1e3:10.0f} ms {m:7.0f} MiB")
    cpu_ratio = med["reference"][1] / med["slo"][1]
    print(f"ratio of medians (reference / slo): wall {ratio:.1f}x, cpu {cpu_ratio:.1f}x   (target: wall >= 8x)")
    # Each run's own ratio (a reference process and the slo process right after it): how far
    # the machine's spells move the figure within one benchmark.
    pairs = [r[0] / s[0] for r, s in zip(times["reference"], times["slo"])]
    print(f"ratio of each run's pair: median {statistics.median(pairs):.1f}x, from {min(pairs):.1f}x to {max(pairs):.1f}x")

    # Same answers? Overall and per class: attainment and p90 by both methods.
    with open(ref_out) as f:
        ref = json.load(f)
    with open(slo_out) as f:
        got = json.load(f)
    groups = [("overall", ref["overall"], got["overall"])]
    by_name = {c["class"]: c for c in got["classes"]}
    groups += [(name, r, by_name.get(name)) for name, r in sorted(ref["classes"].items())]
    rows = []
    for name, r, g in groups:
        if g is None:
            rows.append((f"{name}: no such class in slo's report", 1, None))
            continue
        rows.append((f"{name} attainment", r["attainment"], g["attainment"]))
        for ind in ("ttft_ms", "tpot_ms", "e2e_ms"):
            lin, near = r["percentiles"][ind]["90"]
            p90 = g["percentile_details"][ind]["by_percentile"]["90"]
            rows.append((f"{name} p90 {ind} lin", lin, p90["linear"]))
            rows.append((f"{name} p90 {ind} near", near, p90["nearest"]))
    print()
    print(f"{'':26} {'reference':>18} {'slo':>18}")
    same = True
    for label, want, have in rows:
        ok = close(want, have)
        same &= ok
        print(f"{label:26} {want!s:>18} {have!s:>18}  {'same' if ok else 'DIFFERENT'}")
    print("answers: " + ("the same" if same else "DIFFERENT"))

    if a.json:
        with open(a.json, "w") as f:
            json.dump({
                "file": a.file, "size_bytes": os.path.getsize(a.file), "runs": a.runs, "pause_s": a.pause,
                "reference": {"wall_s": med["reference"][0], "cpu_s": med["reference"][1], "max_rss_mib": med["reference"][2],
                              "all_wall_s": [t[0] for t in times["reference"]]},
                "slo": {"wall_s": med["slo"][0], "cpu_s": med["slo"][1], "max_rss_mib": med["slo"][2],
                        "all_wall_s": [t[0] for t in times["slo"]]},
                "ratio_wall": ratio, "ratio_cpu": cpu_ratio, "pair_ratios_wall": pairs, "same_answers": same,
            }, f, indent=2)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
