#!/usr/bin/env python3
"""Checks every quoted #include in the library folders against the layer table
tests/layering/layers.txt: a file may include headers of its own layer and of
the layers the table lets it use, and no include path may climb out of a
folder with "..". The build refuses the cross-layer includes it can see
(tests/layering/CMakeLists.txt); this catches the ones a relative path would
sneak past it. Within each library, the includes between its own files must
not loop: x.hpp and x.cpp are one node, and a quoted include of the
library's own header is an edge; a cycle is an offence too, printed as the
chain of files and lines that closes it. Prints each offence as FILE:LINE and
exits 1 if there is one."""

import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def read_layers():
    layers = []
    with open(os.path.join(ROOT, "tests", "layering", "layers.txt")) as table:
        for line in table:
            if not line.strip() or line.startswith("#"):
                continue
            library, folder, prefix, *uses = line.split()
            layers.append({"library": library, "folder": folder, "prefix": prefix,
                           "uses": [u for u in uses if u != "-"]})
    return layers


def owner(layers, relative_path):
    """The layer whose folder holds the file: the longest matching folder."""
    best = None
    for layer in layers:
        if relative_path.startswith(layer["folder"] + "/"):
            if best is None or len(layer["folder"]) > len(best["folder"]):
                best = layer
    return best


def layer_of_header(layers, header):
    best = None
    for layer in layers:
        if header.startswith(layer["prefix"]):
            if best is None or len(layer["prefix"]) > len(best["prefix"]):
                best = layer
    return best


def find_cycles(graph):
    """One cycle, as a list of nodes, for each strongly connected component
    of `graph` (node -> {node: where}) with more than one node."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(set(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    cycles = []
    for component in components:
        # The shortest way back to the component's first node from itself.
        start = min(component)
        paths = {start: [start]}
        queue = [start]
        cycle = None
        while queue and cycle is None:
            node = queue.pop(0)
            for other in sorted(graph[node]):
                if other not in component:
                    continue
                if other == start:
                    cycle = paths[node] + [start]
                    break
                if other not in paths:
                    paths[other] = paths[node] + [other]
                    queue.append(other)
        cycles.append(cycle)
    return cycles


def include_cycles(layers, library_includes):
    """The include cycles within each library, as offence lines."""
    offences = []
    for layer in layers:
        graph = {}
        for relative, number, header in library_includes.get(layer["library"], []):
            node = os.path.splitext(os.path.basename(relative))[0]
            graph.setdefault(node, {})
            other = os.path.splitext(os.path.basename(header))[0]
            if other != node:
                graph[node].setdefault(other, f"{relative}:{number}")
                graph.setdefault(other, {})
        for cycle in find_cycles(graph):
            steps = [f'{graph[a][b]} includes "{b}"' for a, b in zip(cycle, cycle[1:])]
            offences.append(f'{layer["library"]}: include cycle {" -> ".join(cycle)}: '
                            + "; ".join(steps))
    return offences


def main():
    layers = read_layers()
    offences = []
    checked = 0
    library_includes = {}
    for layer in layers:
        for directory, _, files in os.walk(os.path.join(ROOT, layer["folder"])):
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp", ".h")):
                    continue
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, ROOT)
                if owner(layers, relative) is not layer:
                    continue  # a sub-folder that is a layer of its own
                checked += 1
                allowed = {layer["library"], *layer["uses"]}
                with open(path, encoding="utf-8") as source:
                    for number, line in enumerate(source, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        header = match.group(1)
                        where = f"{relative}:{number}"
                        if ".." in header.split("/") or header.startswith("/"):
                            offences.append(f'{where}: #include "{header}" leaves its folder; '
                                            "include by the layer's prefix instead")
                            continue
                        target = layer_of_header(layers, header)
                        if target is None:
                            if "/" in header:
                                offences.append(f'{where}: #include "{header}" is no layer\'s '
                                                "header (tests/layering/layers.txt)")
                                continue
                            target = layer  # a header next to the file
                        if target is layer:
                            library_includes.setdefault(layer["library"], []).append(
                                (relative, number, header))
                        if target["library"] not in allowed:
                            offences.append(
                                f'{where}: {layer["library"]} includes "{header}" of '
                                f'{target["library"]}, which tests/layering/layers.txt does not '
                                f'let it use (it may use: {", ".join(sorted(allowed))})')
    offences += include_cycles(layers, library_includes)
    for offence in offences:
        print(offence)
    print(f"includes: {checked} files checked, {len(offences)} offences")
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main())
