#!/usr/bin/env python3
"""The tree describes the product as it is; how it came to be is git's.

Fails when a tracked text file names a work session by its number, an issue or pull request of
this project by its number (written with a hash sign, or after the word issue, PR or pull
request), a commit (a word of 7 to 40 hex digits with both digits and letters), or the planning
documents the product was built from ("the iOS anchor's one hour", "as the seeds say"): a
default is explained by what it does, not by where it came from. Allowed:
  - upstream references written in full, owner/repo#N (swiftlang/swift#60441);
  - compiler directives and literals: #if, #expect, #filePath, ... (never followed by a digit);
  - hex constants written 0x..., UUIDs (their groups are joined by hyphens), digests longer
    than 40 hex digits (sha256);
  - the ALLOWED_WORDS below, and the ALLOWED_LINES patterns in the named files;
  - data that is not prose: fuzz seeds and dictionaries, recorded fixtures;
  - anchors and seeds that are no plan: a YAML alias's anchor, a time a schedule counts from,
    fuzz seeds, random seeds (a line about fuzzing, a corpus or randomness is passed over).
Usage: python3 scripts/check-history.py   (from anywhere; exits 1 and lists the hits)
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Files that are data, not prose.
SKIPPED_PREFIXES = ("Fuzz/seeds/", "Fuzz/dicts/", "Tests/Fixtures/", "share/")
SKIPPED_SUFFIXES = (".gidx", ".csv", ".jsonl", ".log", ".nmea", ".json")

# Hex words that are no commit: the digit alphabet of a hex encoder, a signature algorithm.
ALLOWED_WORDS = {"0123456789abcdef", "0123456789ABCDEF", "ed25519"}

# (path pattern, line pattern): lines a file's format requires.
ALLOWED_LINES = [
    # A patch's blob line (index OLD..NEW MODE): git writes it, git apply reads it.
    (re.compile(r"\.patch$"), re.compile(r"^index [0-9a-f]+\.\.[0-9a-f]+( [0-7]+)?$")),
]

SESSION = re.compile(r"\bsessions?[- ](\d+)\b", re.IGNORECASE)
ISSUE_WORD = re.compile(r"\b(issues?|PRs?|pull requests?|tickets?)\s+#?\d+\b", re.IGNORECASE)
# '#' and digits, not part of owner/repo#N, an anchor (page#4), a shell length (${#x}) or \#.
ISSUE_REF = re.compile(r"(?<![\w/.\-\\{$&])#\d+\b")
# A platform's or a plan's anchor (the iOS anchor, the push-location anchor's budget), and the
# seeds as a plan's documents (per the seeds, the seed's default, a platform's diagnostics seed).
PLANNING_ANCHOR = re.compile(r"\b(?:iOS|Android|push[- ]location|platform|reference|planning)\s+anchors?\b|\bthe\s+anchors?'s?\s+(?:says?|default|value|number)", re.IGNORECASE)
PLANNING_SEEDS = re.compile(
    r"\bthe\s+seeds?(?:'s?)?\b|\b(?:diagnostics|location|platform|product|design|plan's)\s+seeds?\b", re.IGNORECASE)
SEED_DATA = re.compile(r"fuzz|corpus|corpora|random|rng|libFuzzer|--seed|Fuzz/seeds|--write-seeds|finding", re.IGNORECASE)
HEX_WORD = re.compile(r"(?<![0-9A-Za-z_\-.:/])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![0-9A-Za-z_\-])")


def tracked_text_files():
    listed = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], check=True, capture_output=True).stdout
    for path in listed.decode().split("\0"):
        if not path or path.startswith(SKIPPED_PREFIXES) or path.endswith(SKIPPED_SUFFIXES):
            continue
        full = os.path.join(ROOT, path)
        if not os.path.isfile(full) or os.path.islink(full):
            continue
        with open(full, "rb") as handle:
            data = handle.read()
        if b"\0" in data:
            continue
        try:
            yield path, data.decode("utf-8")
        except UnicodeDecodeError:
            continue


def hits_in(path, text):
    allowed = [line for file_pattern, line in ALLOWED_LINES if file_pattern.search(path)]
    for number, line in enumerate(text.splitlines(), 1):
        if any(pattern.match(line) for pattern in allowed):
            continue
        for pattern, what in ((SESSION, "a work session"), (ISSUE_WORD, "an issue"), (ISSUE_REF, "an issue reference")):
            for match in pattern.finditer(line):
                yield number, what, match.group(0)
        for match in PLANNING_ANCHOR.finditer(line):
            yield number, "a planning document", match.group(0)
        if not SEED_DATA.search(line):
            for match in PLANNING_SEEDS.finditer(line):
                yield number, "a planning document", match.group(0)
        for match in HEX_WORD.finditer(line):
            word = match.group(0)
            if word in ALLOWED_WORDS:
                continue
            yield number, "a commit", word


def main():
    hits = []
    for path, text in tracked_text_files():
        if path == "scripts/check-history.py":
            continue
        for number, what, word in hits_in(path, text):
            hits.append(f"{path}:{number}: {what}: {word}")
    if hits:
        print("\n".join(hits))
        print(f"check-history: {len(hits)} reference(s) to how the project was built; describe the product "
              "as it is (history is git's), or extend the allowlist in scripts/check-history.py if it is data",
              file=sys.stderr)
        return 1
    print("check-history: no session, issue, commit or planning references")
    return 0


if __name__ == "__main__":
    sys.exit(main())
