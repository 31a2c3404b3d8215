#!/usr/bin/env python3
"""Lists the circles among the modules of each crate: files that import each other, directly
or around a loop, through `crate::` and `super::` paths (what issue 28 asks there be none of).

Each `.rs` file under `crates/NAME/src` is a module; an import of a module's item is an edge
to the deepest module its path names; imports of an ancestor module are not edges (a child
may use its parent's items). `#[cfg(test)]` parts are left out. Exits 1 when a circle is found.

Usage: scripts/module-cycles.py [CRATE ...]   (default: every crate under crates/)
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")


def modules(src):
    found = {}
    for folder, _, files in os.walk(src):
        for name in files:
            if name.endswith(".rs"):
                path = os.path.join(folder, name)
                parts = os.path.relpath(path, src)[:-3].split(os.sep)
                if parts[-1] in ("mod", "lib", "main"):
                    parts = parts[:-1]
                found[tuple(parts)] = path
    return found


def deepest(mods, path):
    for end in range(len(path), -1, -1):
        if tuple(path[:end]) in mods:
            return tuple(path[:end])
    return ()


def edges(mods, module, text):
    targets = set()
    paths = []
    for match in re.finditer(r"\b(crate|super)((?:::\w+)+)", text):
        paths.append((match.group(1), match.group(2).split("::")[1:]))
    for match in re.finditer(r"\b(crate|super)::\{([^}]*)\}", text):
        for item in re.findall(r"(?:^|,)\s*([a-z_][a-z0-9_]*)", match.group(2)):
            paths.append((match.group(1), [item]))
    for anchor, segments in paths:
        if anchor == "crate":
            path = segments
        else:
            path = list(module)[:-1]
            while segments and segments[0] == "super":
                path, segments = path[:-1], segments[1:]
            path += segments
        target = deepest(mods, path)
        if target != module and module[: len(target)] != target:
            targets.add(target)
    return targets


def circles(graph):
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in graph:
                continue
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append("::".join(other) or "lib")
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def main():
    crates = sys.argv[1:] or sorted(os.listdir(ROOT))
    failed = False
    for crate in crates:
        src = os.path.join(ROOT, crate, "src")
        if not os.path.isdir(src):
            continue
        mods = modules(src)
        graph = {}
        for module, path in mods.items():
            with open(path, encoding="utf-8") as file:
                text = file.read()
            text = text.split("#[cfg(test)]")[0]
            graph[module] = edges(mods, module, text)
        for component in circles(graph):
            failed = True
            print(f"{crate}: {' <-> '.join(component)}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
