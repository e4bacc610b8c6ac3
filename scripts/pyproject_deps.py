"""Print the third-party requirements of pyproject.toml, one per line.

Usage: python scripts/pyproject_deps.py PYPROJECT [EXTRA ...]

The runtime `dependencies` and those of each named optional extra, so
scripts/test.sh can install them (with build isolation) apart from the
project's own extension. Standard library only: tomllib on Python >= 3.11, a
minimal reader of the two arrays otherwise (the file is ours, so its layout
is known: one quoted requirement per element).
"""
import re
import sys


def _load(path):
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:
        tomllib = None
    if tomllib is not None:
        with open(path, "rb") as f:
            return tomllib.load(f)
    text = open(path, encoding="utf-8").read()
    project = {"dependencies": [], "optional-dependencies": {}}
    section = None
    for m in re.finditer(r'^\[([^\]]+)\]|^([A-Za-z0-9_-]+)\s*=\s*\[(.*?)\]', text, re.M | re.S):
        if m.group(1):
            section = m.group(1).strip()
            continue
        key, body = m.group(2), m.group(3)
        items = re.findall(r'"([^"]*)"', body)
        if section == "project" and key == "dependencies":
            project["dependencies"] = items
        elif section == "project.optional-dependencies":
            project["optional-dependencies"][key] = items
    return {"project": project}


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: pyproject_deps.py PYPROJECT [EXTRA ...]")
    project = _load(argv[1]).get("project", {})
    extras = project.get("optional-dependencies", {})
    out = list(project.get("dependencies", []))
    for name in argv[2:]:
        if name not in extras:
            sys.exit(f"{argv[1]}: no optional dependency group '{name}' (have: {', '.join(sorted(extras))})")
        out += extras[name]
    seen = set()
    for req in out:
        if req not in seen:
            seen.add(req)
            print(req)


if __name__ == "__main__":
    main(sys.argv)
