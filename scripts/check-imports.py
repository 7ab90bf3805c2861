#!/usr/bin/env python3
"""Holds the import lines in the Swift sources to the dependencies Package.swift declares.

For every Swift target: each module it imports is a declared dependency (a target or a
product), and each declared dependency is imported somewhere in it. Toolchain modules (Glibc,
FoundationEssentials, Synchronization, Testing, ...) are not dependencies. A C target's
dependencies are its system libraries, checked by the compiler. And the layering's "never"
rules (NEVER below): the core imports no C library module and no adapter, and depends on none,
even through another target; the client library neither imports nor links the server or the
index reader; the configuration neither imports nor links the server, gpsd's adapter or NIO;
the settings it fills know the model alone; the back office's library links no part of the daemon. Exits 1 with one line per mismatch or violation.
"""
import glob
import json
import re
import subprocess
import sys

TOOLCHAIN = {
    "Glibc", "Musl", "Darwin", "Android", "Foundation", "FoundationEssentials",
    "FoundationInternationalization", "Synchronization", "Dispatch", "_Concurrency", "Testing",
    "XCTest",
}
IMPORT = re.compile(
    r"\s*(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+"
    r"(?:(?:struct|enum|class|func|protocol|typealias|var|let)\s+)?([A-Za-z_]\w*)")
DEFAULT_ROOT = {"regular": "Sources", "executable": "Sources", "test": "Tests"}

# The targets that do the I/O the core's protocols stand for, or know a format or a service.
ADAPTERS = (
    "GeoAttrLinux", "GeoAttrGeocoder", "GeoAttrGPSD", "GeoAttrServer", "GeoAttrSystemd",
    "GeoAttrDaemonConfig", "GeoIndex", "GeoIndexBuilder", "CGPS", "CYAML", "CLibGPS", "CLibYAML",
)
# target -> (modules its files never import, targets it never depends on, directly or not)
NIO = ("NIOCore", "NIOPosix", "NIOHTTP1")
NEVER = {
    "GeoAttrCore": (("Glibc", "Musl", "Darwin") + ADAPTERS, ADAPTERS),
    "GeoAttrClient": (("GeoAttrServer", "GeoIndex"), ("GeoAttrServer", "GeoIndex")),
    # The configuration reads settings; the parts that use them (sockets, gpsd) stay out of it.
    "GeoAttrDaemonConfig": (
        ("GeoAttrServer", "GeoAttrGPSD", "CGPS") + NIO, ("GeoAttrServer", "GeoAttrGPSD", "CGPS", "CLibGPS") + NIO),
    "GeoAttrSettings": (("Glibc", "Musl", "Darwin") + ADAPTERS + NIO, ADAPTERS + NIO),
    # The back office's library carries the reader alone: none of the daemon's parts.
    "GeoIndexArrow": (
        ("GeoAttrCore", "GeoAttrLinux", "GeoAttrServer", "GeoAttrGPSD", "CGPS") + NIO,
        ("GeoAttrCore", "GeoAttrLinux", "GeoAttrServer", "GeoAttrGPSD", "CGPS", "CLibGPS") + NIO),
}


def imports_of(directory):
    modules = set()
    for path in glob.glob(directory + "/**/*.swift", recursive=True):
        in_string = False
        with open(path, encoding="utf-8") as source:
            for line in source:
                # Multi-line string literals hold other languages' imports (Python helpers).
                if line.count('"""') % 2 == 1:
                    in_string = not in_string
                    continue
                if in_string:
                    continue
                match = IMPORT.match(line)
                if match:
                    modules.add(match.group(1))
    return modules


def never_violations(package):
    by_name = {target["name"]: target for target in package["targets"]}

    def local_dependencies(name):
        """The targets and products `name` declares (a product is a leaf here)."""
        found = []
        if name not in by_name:
            return found
        for dependency in by_name[name]["dependencies"]:
            for kind in ("byName", "target", "product"):
                if kind in dependency:
                    found.append(dependency[kind][0])
        return found

    problems = []
    for name, (never_imported, never_linked) in NEVER.items():
        target = by_name[name]
        directory = target.get("path") or DEFAULT_ROOT[target["type"]] + "/" + name
        for module in sorted(imports_of(directory) & set(never_imported)):
            problems.append(f"{name} imports {module}, which it must never import")
        seen, pending = set(), local_dependencies(name)
        while pending:
            dependency = pending.pop()
            if dependency not in seen:
                seen.add(dependency)
                pending.extend(local_dependencies(dependency))
        for module in sorted(seen & set(never_linked)):
            problems.append(f"{name} depends on {module}, directly or through another target, which it must never do")
    return problems


def main():
    package = json.loads(subprocess.run(
        ["swift", "package", "dump-package"], check=True, capture_output=True, text=True).stdout)
    problems = []
    for target in package["targets"]:
        if target["type"] not in DEFAULT_ROOT:
            continue
        directory = target.get("path") or DEFAULT_ROOT[target["type"]] + "/" + target["name"]
        if not glob.glob(directory + "/**/*.swift", recursive=True):
            continue
        declared = set()
        for dependency in target["dependencies"]:
            for kind in ("byName", "target", "product"):
                if kind in dependency:
                    declared.add(dependency[kind][0])
        imported = imports_of(directory) - TOOLCHAIN
        for module in sorted(imported - declared):
            problems.append(f"{target['name']} imports {module}, which Package.swift does not declare")
        for module in sorted(declared - imported):
            problems.append(f"{target['name']} declares {module} and imports it nowhere")
    problems += never_violations(package)
    for problem in problems:
        print(f"check-imports: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
