#!/usr/bin/env python3
"""Writes a deterministic, realistic request log for benchmarks.

    python3 bench/gen_requests.py 1000000 target/bench/requests_1m.csv

Columns (what `slo` and bench/reference_report.py read):
    class, input_tokens, ttft_ms, e2e_ms, output_tokens, status, error

The shape follows production chat/code/batch traffic:
- three classes (chat 60 %, code 25 %, batch 15 %) with different prompt and output lengths;
- input and output lengths log-normal (long tails), capped at 128k / 8k tokens;
- TTFT = base + prefill (per input token) + queueing (log-normal, plus a 1 % Pareto tail of
  bad minutes), so p99 sits far above p50;
- TPOT log-normal around 30 ms with a heavy upper tail; E2E = TTFT + TPOT * (n - 1);
- 1 % of outputs have 0 tokens and 1 % have 1 token (TPOT undefined: E2E is TTFT plus a little);
- 0.5 % errors (status "error", an error text, no latencies) and 0.2 % timeouts (status
  "timeout", E2E at the 60 s limit, TTFT only when the first token came).
Latencies have three decimals (microseconds), as benchmark clients write them.

The seed is fixed, so the same N always gives the same file (byte for byte).
"""

import sys

import numpy as np

SEED = 20261101
CLASSES = np.array(["chat", "code", "batch"])
CLASS_SHARE = [0.60, 0.25, 0.15]
# Per class: median input tokens, input sigma, median output tokens, output sigma.
SHAPE = {
    "chat": (900, 1.1, 220, 0.9),
    "code": (2500, 0.9, 60, 1.0),
    "batch": (9000, 0.8, 450, 0.7),
}
ERRORS = ["upstream connect error", "HTTP 500: internal server error", "connection reset by peer"]


def generate(n, seed=SEED):
    rng = np.random.default_rng(seed)
    cls = rng.choice(3, size=n, p=CLASS_SHARE)
    inp = np.empty(n)
    out = np.empty(n)
    for k, name in enumerate(CLASSES):
        m = cls == k
        med_in, sd_in, med_out, sd_out = SHAPE[name]
        inp[m] = rng.lognormal(np.log(med_in), sd_in, m.sum())
        out[m] = rng.lognormal(np.log(med_out), sd_out, m.sum())
    inp = np.clip(np.rint(inp), 1, 131_072).astype(np.int64)
    out = np.clip(np.rint(out), 2, 8_192).astype(np.int64)
    short = rng.random(n)
    out[short < 0.01] = 0
    out[(short >= 0.01) & (short < 0.02)] = 1

    queue = rng.lognormal(np.log(40.0), 1.0, n)
    bad_minute = rng.random(n) < 0.01
    queue[bad_minute] += 300.0 * (rng.pareto(1.5, bad_minute.sum()) + 1.0)
    queue = np.minimum(queue, 30_000.0)  # a client gives up long before
    ttft = 35.0 + 0.03 * inp + queue
    tpot = rng.lognormal(np.log(30.0), 0.25, n)
    slow = rng.random(n) < 0.03
    tpot[slow] *= 1.0 + rng.pareto(2.0, slow.sum())
    e2e = ttft + tpot * np.maximum(out - 1, 0) + rng.uniform(0.5, 5.0, n)

    fate = rng.random(n)
    error = fate < 0.005
    timeout = (fate >= 0.005) & (fate < 0.007)
    first_token = rng.random(n) < 0.5
    status = np.where(error, "error", np.where(timeout, "timeout", "ok"))
    message = np.where(error, np.array(ERRORS)[rng.integers(0, len(ERRORS), n)], "")
    return cls, inp, ttft, e2e, out, status, message, error, timeout & ~first_token


def write(path, n):
    cls, inp, ttft, e2e, out, status, message, error, no_first = generate(n)
    e2e = np.where(status == "timeout", 60_000.0, e2e)
    with open(path, "w", newline="") as f:
        f.write("class,input_tokens,ttft_ms,e2e_ms,output_tokens,status,error\n")
        names = CLASSES[cls].tolist()
        rows = zip(names, inp.tolist(), ttft.tolist(), e2e.tolist(), out.tolist(),
                   status.tolist(), message.tolist(), error.tolist(), no_first.tolist())
        lines = []
        for c, i, t, e, o, s, msg, err, nf in rows:
            if err:
                lines.append(f"{c},{i},,,,{s},{msg}\n")
            elif s == "timeout":
                lines.append(f"{c},{i},{'' if nf else f'{t:.3f}'},{e:.3f},,{s},\n")
            else:
                lines.append(f"{c},{i},{t:.3f},{e:.3f},{o},{s},\n")
            if len(lines) == 65_536:
                f.write("".join(lines))
                lines.clear()
        f.write("".join(lines))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_requests.py N OUT.csv")
    write(sys.argv[2], int(sys.argv[1]))


if __name__ == "__main__":
    main()
