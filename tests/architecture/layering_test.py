#!/usr/bin/env python3
"""Checks that every #include in a module's folder names a header of that module or of a module it
links (the link graph comes from CMake: <build>/layering.txt, one "folder: allowed folders" line
per module), and that no include goes through a folder that is not in the repository.

usage: layering_test.py LAYERING_TXT SOURCE_DIR
"""
import os
import re
import sys


def main() -> int:
    layering, source = sys.argv[1], sys.argv[2]
    allowed = {}
    with open(layering, encoding="utf-8") as f:
        for line in f:
            folder, _, rest = line.partition(":")
            if folder.strip():
                allowed[folder.strip()] = rest.split()
    if len(allowed) < 9:
        print(f"{layering}: only {len(allowed)} modules; expected the library modules at least")
        return 1
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    # Longest folder first, so gui/models is not taken for models.
    folders = sorted(allowed, key=len, reverse=True)
    problems, checked = [], 0
    for folder in allowed:
        root = os.path.join(source, folder)
        for name in sorted(os.listdir(root)):
            if not name.endswith((".cpp", ".hpp")):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for m in include.finditer(text):
                target = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                where = f"{folder}/{name}:{line}"
                if target.startswith("kvsim/"):
                    problems.append(f'{where}: "{target}" names no folder of the repository')
                    continue
                if target == "sim/core/version.hpp" or target.endswith(".moc"):
                    continue  # generated into the build's include root
                if not os.path.isfile(os.path.join(source, target)):
                    problems.append(f'{where}: "{target}" is not a file of the repository')
                    continue
                owner = next((d for d in folders if target.startswith(d + "/")), None)
                checked += 1
                if owner is not None and owner not in allowed[folder]:
                    problems.append(f'{where}: includes "{target}" of {owner}, which {folder} does not link '
                                    f'(it may include: {" ".join(allowed[folder])})')
    for p in problems:
        print(p)
    print(f"{checked} includes in {len(allowed)} modules checked; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
