#!/usr/bin/env python3
"""Holds the Swift sources to a size a reader can hold in mind.

No file under Sources/ is over 400 lines, and no function or initializer is
over 80 lines, unless the comment right above it says `hot loop:` and why it stays whole (the
index's inner loops, where a call per step shows in the benchmarks). Exits 1 with one line per
file or function over its limit.
"""
import glob
import re
import sys

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80
DECLARATION = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|static|"
                         r"override|mutating|nonisolated|final|convenience|required)\s+)*(?:func\s|init[?!]?\s*[(<]|deinit\b)")
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def body_length(lines, start):
    """Lines from the declaration at `start` to its closing brace; None for a bodiless one."""
    depth = 0
    opened = False
    for index in range(start, len(lines)):
        code = STRING.sub('""', lines[index]).split("//")[0]
        for char in code:
            if char == "{":
                depth += 1
                opened = True
            elif char == "}":
                depth -= 1
        if opened and depth <= 0:
            return index - start + 1
        if not opened and index > start + 20:
            return None
    return None


def exempt(lines, start):
    """A `hot loop:` comment in the comment block right above the declaration."""
    index = start - 1
    while index >= 0 and lines[index].strip().startswith("//"):
        if "hot loop:" in lines[index]:
            return True
        index -= 1
    return False


def main():
    problems = []
    for path in sorted(glob.glob("Sources/**/*.swift", recursive=True)):
        with open(path, encoding="utf-8") as source:
            lines = source.read().split("\n")
        count = len(lines) - (1 if lines and lines[-1] == "" else 0)
        if count > MAX_FILE_LINES:
            problems.append(f"{path}: {count} lines (at most {MAX_FILE_LINES}): split it by concept")
        for index, line in enumerate(lines):
            if not DECLARATION.match(line):
                continue
            length = body_length(lines, index)
            if length and length > MAX_FUNCTION_LINES and not exempt(lines, index):
                problems.append(f"{path}:{index + 1}: {line.strip()[:60]} is {length} lines (at most {MAX_FUNCTION_LINES})")
    for problem in problems:
        print(f"check-shape: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
