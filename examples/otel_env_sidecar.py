#!/usr/bin/env python3
"""Start a program with geoattrd's attributes in OTEL_RESOURCE_ATTRIBUTES (stdlib only).

    otel_env_sidecar.py [--socket PATH] -- PROGRAM [ARGS...]

Asks geoattrd for the attributes in the OpenTelemetry form (values already percent-encoded),
appends them to any OTEL_RESOURCE_ATTRIBUTES the environment has, and execs PROGRAM. A Resource
is fixed for a process's life: use this for devices that do not move, or restart the program
when the location changes (see docs/clients.md: resource or record attributes).
If geoattrd has no location yet, or is not running, PROGRAM starts without them.
"""
import http.client
import os
import socket
import sys


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=5):
        super().__init__("geoattrd", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def geo_attributes(path):
    try:
        connection = UnixHTTPConnection(path)
        connection.request("GET", "/v1/attributes?format=otel")
        response = connection.getresponse()
        body = response.read().decode().strip()
        connection.close()
    except OSError as error:
        print("otel_env_sidecar: geoattrd unreachable at %s: %s" % (path, error), file=sys.stderr)
        return ""
    if response.status != 200:
        print("otel_env_sidecar: geoattrd answered %d: %s" % (response.status, body), file=sys.stderr)
        return ""
    return body


def main(argv):
    path = "/run/geoattrd/geoattrd.sock"
    if len(argv) > 2 and argv[1] == "--socket":
        path = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__, file=sys.stderr)
        return 64
    attributes = geo_attributes(path)
    if attributes:
        existing = os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
        os.environ["OTEL_RESOURCE_ATTRIBUTES"] = existing + "," + attributes if existing else attributes
    os.execvp(argv[2], argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
