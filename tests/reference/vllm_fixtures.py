#!/usr/bin/env python3
"""Writes the vLLM and SGLang fixtures of crates/core/tests/fixtures/formats/.

Run from the repository root:  python3 tests/reference/vllm_fixtures.py  (needs numpy).

Each fixture is a simulated benchmark run saved the way the tool saves it, with the tool's own
summary fields computed the way the tool computes them, so that crates/core/tests/formats.rs can
check that the table we load gives back the file's own numbers (to 1e-9 relative):

  vLLM (vllm/benchmarks/serve.py, calculate_metrics; benchmarks/benchmark_serving.py before it),
  over successful requests only:
    mean_X_ms   = numpy.mean(xs or 0) * 1000
    median_X_ms = numpy.median(xs or 0) * 1000
    std_X_ms    = numpy.std(xs or 0) * 1000              (population: ddof=0)
    pP_X_ms     = numpy.percentile(xs or 0, P) * 1000    (method="linear", numpy's default)
  with
    ttfts = [o.ttft for successful o]                                 (seconds)
    itls  = every gap of every successful request, pooled             (seconds)
    tpots = [(o.latency - o.ttft) / (n - 1) for successful o if n > 1],  n = output_len
    e2els = [o.latency for successful o]
  request_goodput counts successful requests meeting every --goodput target (TPOT of a request
  with n <= 1 counts as 0), divided by the duration.

  SGLang (python/sglang/bench_serving.py, calculate_metrics): the same formulas, its own key
  names (mean_e2e_latency_ms, p95_itl_ms ...), no std for E2E percentiles other than p99.

The runs are simulated from timestamps as the clients measure them (time.perf_counter): ttft is
first token minus send, each gap the difference of consecutive token times, latency last token
minus send (vLLM) or the final [DONE] chunk minus send (SGLang). A seeded generator makes the
files reproducible.
"""

import json
import math
import os

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "core", "tests", "fixtures", "formats")
MS = 1000

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "vllm/benchmarks/lib/endpoint_request_func.py", line 158, in async_request_openai_completions\n'
    "    async for chunk_bytes in response.content.iter_any():\n"
    "aiohttp.client_exceptions.ClientPayloadError: Response payload is not completed\n"
)


def simulate(rng, n, start0, rate, failures, one_token, bundled, done_delay=0.0):
    """Per-request outputs as the benchmark clients record them (seconds, perf_counter clock)."""
    outputs = []
    t_arrival = start0
    for i in range(n):
        t_arrival += 0.0 if rate == math.inf else float(rng.exponential(1.0 / rate))
        prompt_len = int(rng.integers(40, 1800))
        queue = float(rng.uniform(0.0, 0.35)) if i % 3 == 0 else float(rng.uniform(0.0, 0.002))
        st = t_arrival + queue
        if i in failures:
            outputs.append(
                dict(success=False, prompt_len=prompt_len, output_len=0, ttft=0.0, itl=[], latency=0.0,
                     start_time=st, queue=queue, error=failures[i], text="")
            )
            continue
        n_out = 1 if i in one_token else int(rng.integers(8, 64))
        # vLLM and SGLang time chunks, not tokens: a bundled stream has fewer gaps than n - 1.
        n_chunks = max(1, n_out // 3) if i in bundled else n_out
        t_first = st + 0.04 + prompt_len * 0.00012 + float(rng.gamma(2.0, 0.03))
        times = [t_first]
        for k in range(n_chunks - 1):
            gap = 0.018 + float(rng.exponential(0.006))
            if k == 5 and i % 7 == 0:
                gap += 0.45  # a prefill stall next to this request
            times.append(times[-1] + gap)
        ttft = times[0] - st
        itl = [b - a for a, b in zip(times, times[1:])]
        latency = times[-1] + done_delay - st
        outputs.append(
            dict(success=True, prompt_len=prompt_len, output_len=n_out, ttft=ttft, itl=itl, latency=latency,
                 start_time=st, queue=queue, error="", text=" ok" * min(n_out, 4))
        )
    return outputs


def vllm_metrics(outputs, dur_s, percentiles, goodput):
    """vllm/benchmarks/serve.py calculate_metrics, for a tokenizer-backed generation run."""
    actual_output_lens, total_input, completed, good_completed = [], 0, 0, 0
    itls, tpots, all_tpots, ttfts, e2els = [], [], [], [], []
    for o in outputs:
        if o["success"]:
            output_len = o["output_len"]
            actual_output_lens.append(output_len)
            total_input += o["prompt_len"]
            tpot = 0.0
            if output_len > 1:
                tpot = (o["latency"] - o["ttft"]) / (output_len - 1)
                tpots.append(tpot)
            all_tpots.append(tpot)
            itls += o["itl"]
            ttfts.append(o["ttft"])
            e2els.append(o["latency"])
            completed += 1
        else:
            actual_output_lens.append(0)
    if goodput:
        valid, slos = [], []
        for key, values in (("ttft", ttfts), ("tpot", all_tpots), ("e2el", e2els)):
            if key in goodput:
                valid.append(values)
                slos.append(goodput[key] / MS)
        for req in zip(*valid):
            if all(s >= r for s, r in zip(slos, req)):
                good_completed += 1
    m = dict(
        completed=completed,
        failed=len(outputs) - completed,
        total_input=total_input,
        total_output=sum(actual_output_lens),
        request_throughput=completed / dur_s,
        request_goodput=good_completed / dur_s,
        output_throughput=sum(actual_output_lens) / dur_s,
        total_token_throughput=(total_input + sum(actual_output_lens)) / dur_s,
    )
    for name, xs in (("ttft", ttfts), ("tpot", tpots), ("itl", itls), ("e2el", e2els)):
        m[name] = stats(xs, percentiles)
    m["actual_output_lens"] = actual_output_lens
    return m


def stats(xs, percentiles):
    """(mean, median, std, [(p, value)]) in ms, exactly as vLLM and SGLang call numpy."""
    return (
        float(np.mean(xs or 0) * MS),
        float(np.median(xs or 0) * MS),
        float(np.std(xs or 0) * MS),
        [(p, float(np.percentile(xs or 0, p) * MS)) for p in percentiles],
    )


def peak(outputs):
    ok = [o for o in outputs if o["success"]]
    if not ok:
        return 0.0, 0
    t0 = min(o["start_time"] for o in ok)
    t1 = max(o["start_time"] + o["latency"] for o in ok)
    buckets = np.zeros(int(np.ceil(t1 - t0)) + 1)
    for o in ok:
        t = o["start_time"] + o["ttft"]
        ts = [t]
        for g in o["itl"]:
            t += g
            ts.append(t)
        for t in ts:
            b = int(t - t0)
            if 0 <= b < len(buckets):
                buckets[b] += 1
    events = sorted([(o["start_time"], 1) for o in ok] + [(o["start_time"] + o["latency"], -1) for o in ok])
    cur = best = 0
    for _, d in events:
        cur += d
        best = max(best, cur)
    return float(np.max(buckets)), best


def vllm_result(outputs, *, old, percentiles, goodput, request_rate, max_concurrency, model, date, detailed=True):
    dur_s = max(o["start_time"] + o["latency"] for o in outputs) - min(o["start_time"] for o in outputs) + 0.01
    m = vllm_metrics(outputs, dur_s, percentiles, goodput)
    r = {}
    r["date"] = date
    if not old:
        r["endpoint_type"] = "openai"
    r["backend"] = "openai"
    if not old:
        r["label"] = None
    r["model_id"] = model
    r["tokenizer_id"] = model
    r["num_prompts"] = len(outputs)
    r["request_rate"] = request_rate if request_rate < math.inf else "inf"
    r["burstiness"] = 1.0
    r["max_concurrency"] = max_concurrency
    r["duration"] = dur_s
    r["completed"] = m["completed"]
    if not old:
        r["failed"] = m["failed"]
    r["total_input_tokens"] = m["total_input"]
    r["total_output_tokens"] = m["total_output"]
    r["request_throughput"] = m["request_throughput"]
    r["request_goodput:" if old else "request_goodput"] = m["request_goodput"] if goodput else None
    r["output_throughput"] = m["output_throughput"]
    r["total_token_throughput"] = m["total_token_throughput"]
    r["input_lens"] = [o["prompt_len"] for o in outputs]
    r["output_lens"] = m["actual_output_lens"]
    r["ttfts"] = [o["ttft"] for o in outputs]
    r["itls"] = [o["itl"] for o in outputs]
    if not old:
        r["latencies"] = [o["latency"] for o in outputs]
        r["start_times"] = [o["start_time"] for o in outputs]
        r["queue_times"] = [o["queue"] for o in outputs]
    r["generated_texts"] = [o["text"] for o in outputs]
    r["errors"] = [o["error"] for o in outputs]
    if not old:
        r["max_output_tokens_per_s"], r["max_concurrent_requests"] = peak(outputs)
        r["rtfx"] = 0.0
    metric_names = ["ttft", "tpot", "itl"] + ([] if old else ["e2el"])
    for name in metric_names:
        mean, median, std, pcts = m[name]
        r[f"mean_{name}_ms"] = mean
        r[f"median_{name}_ms"] = median
        r[f"std_{name}_ms"] = std
        for p, value in pcts:
            p_word = str(int(p)) if int(p) == p else str(p)
            r[f"p{p_word}_{name}_ms"] = value
    if not old and max_concurrency is not None:
        queue = [o["queue"] for o in outputs if o["success"]]
        mean, median, std, pcts = stats(queue, percentiles)
        r["mean_client_queue_time_ms"] = mean
        r["median_client_queue_time_ms"] = median
        r["std_client_queue_time_ms"] = std
        for p, value in pcts:
            p_word = str(int(p)) if int(p) == p else str(p)
            r[f"p{p_word}_client_queue_time_ms"] = value
    if not detailed:
        for field in ["input_lens", "output_lens", "start_times", "ttfts", "itls", "generated_texts", "errors"]:
            r.pop(field, None)
    return r


def sglang_result(outputs, *, request_rate, max_concurrency, model):
    dur_s = max(o["start_time"] + o["latency"] for o in outputs) - min(o["start_time"] for o in outputs) + 0.01
    output_lens, itls, tpots, ttfts, e2e, total_input, completed = [], [], [], [], [], 0, 0
    for o in outputs:
        if o["success"]:
            output_lens.append(o["output_len"])
            total_input += o["prompt_len"]
            if o["output_len"] > 1:
                tpots.append((o["latency"] - o["ttft"]) / (o["output_len"] - 1))
            itls += o["itl"]
            ttfts.append(o["ttft"])
            e2e.append(o["latency"])
            completed += 1
        else:
            output_lens.append(0)
    r = {
        "tag": None,
        "backend": "sglang",
        "dataset_name": "random",
        "request_rate": request_rate,
        "max_concurrency": max_concurrency,
        "sharegpt_output_len": None,
        "random_input_len": 1024,
        "random_output_len": 128,
        "random_range_ratio": 0.0,
        "server_info": {"model_path": model, "served_model_name": model, "tp_size": 1},
        "duration": dur_s,
        "completed": completed,
        "total_input_tokens": total_input,
        "total_input_text_tokens": total_input,
        "total_input_vision_tokens": 0,
        "total_output_tokens": sum(output_lens),
        "total_output_tokens_retokenized": sum(output_lens),
        "request_throughput": completed / dur_s,
        "input_throughput": total_input / dur_s,
        "output_throughput": sum(output_lens) / dur_s,
        "total_throughput": (total_input + sum(output_lens)) / dur_s,
        "mean_e2e_latency_ms": float(np.mean(e2e) * MS),
        "median_e2e_latency_ms": float(np.median(e2e) * MS),
        "std_e2e_latency_ms": float(np.std(e2e) * MS),
        "p99_e2e_latency_ms": float(np.percentile(e2e, 99) * MS),
        "mean_ttft_ms": float(np.mean(ttfts or 0) * MS),
        "median_ttft_ms": float(np.median(ttfts or 0) * MS),
        "std_ttft_ms": float(np.std(ttfts or 0) * MS),
        "p99_ttft_ms": float(np.percentile(ttfts or 0, 99) * MS),
        "mean_tpot_ms": float(np.mean(tpots or 0) * MS),
        "median_tpot_ms": float(np.median(tpots or 0) * MS),
        "std_tpot_ms": float(np.std(tpots or 0) * MS),
        "p99_tpot_ms": float(np.percentile(tpots or 0, 99) * MS),
        "mean_itl_ms": float(np.mean(itls or 0) * MS),
        "median_itl_ms": float(np.median(itls or 0) * MS),
        "std_itl_ms": float(np.std(itls or 0) * MS),
        "p95_itl_ms": float(np.percentile(itls or 0, 95) * MS),
        "p99_itl_ms": float(np.percentile(itls or 0, 99) * MS),
        "concurrency": float(np.sum(e2e) / dur_s),
        "accept_length": None,
        "input_lens": [o["prompt_len"] for o in outputs],
        "output_lens": output_lens,
        "ttfts": [o["ttft"] for o in outputs],
        "itls": [o["itl"] for o in outputs],
        "generated_texts": [o["text"] for o in outputs],
        "errors": [o["error"] for o in outputs],
    }
    return r


def write(name, obj, *, lines=False):
    path = os.path.join(OUT, name)
    with open(path, "w", encoding="utf-8") as f:
        if lines:
            for o in obj:
                f.write(json.dumps(o) + "\n")  # SGLang: json.dumps per line (Infinity for inf)
        else:
            json.dump(obj, f)  # vLLM: json.dump(result_json, outfile)
    print("wrote", os.path.normpath(path))


def main():
    os.makedirs(OUT, exist_ok=True)
    model = "meta-llama/Llama-3.1-8B-Instruct"
    rng = np.random.default_rng(20251101)

    # vllm bench serve --request-rate inf --max-concurrency 16 --goodput ttft:300 tpot:40
    #   --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99,99.9
    #   --save-result --save-detailed
    new = simulate(rng, 60, 1000.0, math.inf,
                   failures={11: TRACEBACK, 42: "Bad Gateway"},
                   one_token={5, 17, 33}, bundled={8, 23, 51})
    write("vllm_new.json", vllm_result(new, old=False, percentiles=[50, 90, 99, 99.9],
                                       goodput={"ttft": 300.0, "tpot": 40.0}, request_rate=math.inf,
                                       max_concurrency=16, model=model, date="20251101-120000"))

    # benchmarks/benchmark_serving.py (before latencies were saved): --request-rate 4
    #   --goodput ttft:300 --save-result (per-request arrays were always saved then)
    old = simulate(rng, 56, 5000.0, 4.0,
                   failures={3: "Internal Server Error", 30: TRACEBACK},
                   one_token={9, 40}, bundled={12})
    write("vllm_old.json", vllm_result(old, old=True, percentiles=[99], goodput={"ttft": 300.0},
                                       request_rate=4.0, max_concurrency=None, model=model,
                                       date="20250214-093000"))

    # vllm bench serve --request-rate 8 --save-result (no --save-detailed)
    summary = simulate(rng, 20, 9000.0, 8.0, failures={}, one_token=set(), bundled=set())
    write("vllm_summary_only.json", vllm_result(summary, old=False, percentiles=[99], goodput=None,
                                                request_rate=8.0, max_concurrency=None, model=model,
                                                date="20251102-080000", detailed=False))

    # Every request failed (the server was down): vLLM still writes the file.
    down = "Cannot connect to host 127.0.0.1:8000 ssl:default [Connect call failed ('127.0.0.1', 8000)]"
    failed = simulate(rng, 6, 100.0, math.inf,
                      failures={i: f"Traceback (most recent call last):\naiohttp.client_exceptions.ClientConnectorError: {down}\n" for i in range(6)},
                      one_token=set(), bundled=set())
    write("vllm_all_failed.json", vllm_result(failed, old=False, percentiles=[99], goodput={"ttft": 300.0},
                                              request_rate=math.inf, max_concurrency=None, model=model,
                                              date="20251103-070000"))

    # python -m sglang.bench_serving --output-details, run twice into one --output-file.
    run1 = simulate(rng, 8, 50.0, math.inf, failures={}, one_token={2}, bundled=set(), done_delay=0.0004)
    run2 = simulate(rng, 8, 80.0, 2.0, failures={6: TRACEBACK}, one_token=set(), bundled=set(), done_delay=0.0004)
    write("sglang.jsonl", [
        sglang_result(run1, request_rate=math.inf, max_concurrency=4, model="Qwen/Qwen2.5-7B-Instruct"),
        sglang_result(run2, request_rate=2.0, max_concurrency=None, model="Qwen/Qwen2.5-7B-Instruct"),
    ], lines=True)


if __name__ == "__main__":
    main()
