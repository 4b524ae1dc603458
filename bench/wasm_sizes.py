#!/usr/bin/env python3
"""Where a wasm's bytes are: its code by crate, and the engine's share against the UI's.

    python3 bench/wasm_sizes.py FILE.wasm

FILE.wasm must keep its function names (a `name` section). The app's wasm as shipped has none;
`bash bench/wasm_sizes.sh` builds one with names, optimised as trunk optimises the app's, and
runs this script on it (docs/performance.md, twenty-first round).

A function counts for the crate its name starts with (`slo_core::evaluate::prepare` for
slo_core; `<f64 as core::fmt::Display>::fmt` for core). Code the optimiser inlined counts for
the function it was inlined into. Sizes are the bodies' bytes, and gzip's level 9 of the
bodies of a crate (or a group of crates) put together: gzip of the whole file is a little
less than the sum of its parts. Standard library only: no package to install.
"""

import collections
import re
import sys
import zlib

# The groups the summary adds up. Crates in neither group (the standard library, the
# allocator, compiler helpers) are "std and the rest".
ENGINE = {
    "slo_core", "slo_sort", "slo_tally", "sha2", "csv", "csv_core", "serde", "serde_core",
    "serde_json", "zmij", "itoa", "ryu", "memchr", "indexmap", "hashbrown",
}
UI = {
    "slo_workbench", "leptos", "leptos_dom", "leptos_macro", "reactive_graph", "reactive_stores",
    "tachys", "plotly", "js_sys", "web_sys", "wasm_bindgen", "wasm_bindgen_futures",
    "erased_serde", "either_of", "throw_error", "any_spawner", "or_poisoned", "send_wrapper",
    "futures_util", "futures_channel", "futures_executor", "oco_ref", "guardian",
    "hydration_context", "slotmap", "next_tuple", "serde_wasm_bindgen",
}

SECTION_NAMES = {0: "custom", 1: "type", 2: "import", 3: "function", 4: "table", 5: "memory",
                 6: "global", 7: "export", 8: "start", 9: "element", 10: "code", 11: "data",
                 12: "data count"}


def leb(data, at):
    """An unsigned LEB128 number at `at`: (value, where the next field starts)."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def name_at(data, at):
    """A length-prefixed UTF-8 name at `at`: (text, where the next field starts)."""
    n, at = leb(data, at)
    return data[at:at + n].decode("utf-8", "replace"), at + n


def imported_functions(data, at):
    """How many imports of the import section at `at` are functions (they come first in the
    function index space)."""
    count, at = leb(data, at)
    functions = 0
    for _ in range(count):
        _, at = name_at(data, at)
        _, at = name_at(data, at)
        kind = data[at]
        at += 1
        if kind == 0:  # function: a type index
            _, at = leb(data, at)
            functions += 1
        elif kind == 1:  # table: a reference type and limits
            at += 1
            flags = data[at]
            _, at = leb(data, at + 1)
            if flags & 1:
                _, at = leb(data, at)
        elif kind == 2:  # memory: limits
            flags = data[at]
            _, at = leb(data, at + 1)
            if flags & 1:
                _, at = leb(data, at)
        elif kind == 3:  # global: a value type and mutability
            at += 2
        else:
            sys.exit(f"unknown import kind {kind}")
    return functions


def read(data):
    """The sections' sizes, each function body by index, and the function names."""
    if data[:4] != b"\0asm":
        sys.exit("not a WebAssembly module")
    sections, bodies, names = [], {}, {}
    first_defined = 0
    at = 8
    while at < len(data):
        kind = data[at]
        size, start = leb(data, at + 1)
        end = start + size
        label = SECTION_NAMES.get(kind, f"section {kind}")
        if kind == 2:
            first_defined = imported_functions(data, start)
        elif kind == 10:
            count, p = leb(data, start)
            for k in range(count):
                n, p = leb(data, p)
                bodies[first_defined + k] = data[p:p + n]
                p += n
        elif kind == 0:
            label, p = name_at(data, start)
            if label == "name":
                while p < end:
                    sub, p = data[p], p + 1
                    n, p = leb(data, p)
                    if sub == 1:  # function names
                        count, q = leb(data, p)
                        for _ in range(count):
                            index, q = leb(data, q)
                            names[index], q = name_at(data, q)
                    p += n
            label = f"custom: {label}"
        sections.append((label, data[start:end]))
        at = end
    return sections, bodies, names


def crate_of(name):
    """The crate a function's name starts with, disambiguators (`core[1a2b]`) dropped."""
    plain = re.sub(r"\[[0-9a-f]+\]", "", name)
    match = re.search(r"(?:^|[<&*\s(])([A-Za-z_][A-Za-z0-9_]*)::", plain)
    return match.group(1) if match else "(unnamed)"


def gz(data):
    return len(zlib.compress(data, 9))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    data = open(sys.argv[1], "rb").read()
    sections, bodies, names = read(data)
    if not names:
        sys.exit(f"{sys.argv[1]}: no function names (build it as the docstring says)")
    print(f"{sys.argv[1]}: {len(data):,} bytes, {gz(data):,} gzipped")
    print("\nsections (bytes, gzipped alone):")
    for label, body in sections:
        print(f"  {label:28s} {len(body):>10,} {gz(body):>9,}")

    by_crate = collections.defaultdict(list)
    for index, body in bodies.items():
        by_crate[crate_of(names.get(index, ""))].append(body)
    code = sum(len(b) for b in bodies.values())
    print(f"\ncode by crate ({len(bodies):,} functions, {code:,} bytes):")
    print(f"  {'crate':24s} {'bytes':>10s} {'share':>6s} {'functions':>9s} {'gzipped':>9s}")
    rows = sorted(by_crate.items(), key=lambda kv: -sum(map(len, kv[1])))
    for crate, parts in rows[:30]:
        size = sum(map(len, parts))
        print(f"  {crate:24s} {size:>10,} {100 * size / code:5.1f}% {len(parts):>9,} "
              f"{gz(b''.join(parts)):>9,}")

    groups = collections.defaultdict(bytes)
    for crate, parts in by_crate.items():
        group = "engine" if crate in ENGINE else "UI" if crate in UI else "std and the rest"
        groups[group] += b"".join(parts)
    print("\ncode by group (gzipped: the group's bodies put together):")
    for group in ("engine", "UI", "std and the rest"):
        print(f"  {group:24s} {len(groups[group]):>10,} {gz(groups[group]):>9,}")
    not_ui = groups["engine"] + groups["std and the rest"]
    print(f"  {'all but the UI':24s} {len(not_ui):>10,} {gz(not_ui):>9,}")


if __name__ == "__main__":
    main()
