#!/usr/bin/env python3
"""The escaping corpus (escaping-corpus's output directory) read back by PyPI's readers.

    readers.py CORPUS [otel] [dotenv]

otel    opentelemetry-sdk's own OTEL_RESOURCE_ATTRIBUTES parser (OTELResourceDetector, run by
        Resource.create) reads otel.txt from the environment: every value exactly, control
        characters and NUL included (the format percent-encodes every byte but the unreserved).
dotenv  python-dotenv reads geo.env (the env format, quoted for bash, dash and systemd): every
        value exactly, as an environment carries it, except those with a `$` or a backquote;
        there it keeps the backslash the shells remove, and expands ${NAME} (clients.md says so).
        Both directions are held: a value outside the documented limit read differently fails,
        and so does one inside it read exactly (the documentation would then say too much).
Prints one line per reader with its counts; exits 1 on any difference.
"""
import json
import os
import sys


def load(corpus):
    with open(os.path.join(corpus, "cases.json"), encoding="utf-8") as handle:
        return json.load(handle)


def report(reader, cases, wrong):
    for case, got in wrong[:5]:
        print(f"  {reader}: {case['key']} {case['value']!r} read as {got!r}")
    return not wrong


def check_otel(corpus, cases):
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.version import __version__

    with open(os.path.join(corpus, "otel.txt"), encoding="utf-8") as handle:
        text = handle.read()
    for name in ("OTEL_EXPERIMENTAL_RESOURCE_DETECTORS", "OTEL_SERVICE_NAME"):
        os.environ.pop(name, None)
    os.environ["OTEL_RESOURCE_ATTRIBUTES"] = text
    attributes = Resource.create().attributes
    wrong = [(case, attributes.get(case["key"])) for case in cases if attributes.get(case["key"]) != case["value"]]
    print(f"opentelemetry-sdk {__version__} (OTEL_RESOURCE_ATTRIBUTES): "
          f"{len(cases) - len(wrong)} of {len(cases)} values exact")
    return report("opentelemetry-sdk", cases, wrong)


def dotenv_limited(value):
    """The documented limit: python-dotenv reads these differently from bash, dash and systemd."""
    return "$" in value or "`" in value


def check_dotenv(corpus, cases):
    from importlib.metadata import version

    from dotenv import dotenv_values

    read = dotenv_values(os.path.join(corpus, "geo.env"))
    wrong = []
    limited = 0
    for case in cases:
        expected, got = case["env"], read.get(case["name"])
        if dotenv_limited(expected):
            limited += 1
            # Where it does not expand ${...}, the difference is exactly the kept backslashes.
            kept = expected.replace("$", "\\$").replace("`", "\\`")
            if got == expected or ("${" not in expected and got != kept):
                wrong.append((case, got))
        elif got != expected:
            wrong.append((case, got))
    print(f"python-dotenv {version('python-dotenv')} (geo.env): {len(cases) - limited} of {len(cases)} values exact; "
          f"the {limited} with $ or ` read as documented")
    return report("python-dotenv", cases, wrong)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    corpus = sys.argv[1]
    cases = load(corpus)
    checks = {"otel": check_otel, "dotenv": check_dotenv}
    results = [checks[name](corpus, cases) for name in sys.argv[2:]]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
