#!/usr/bin/env bash
# Installs the Debian 12 packages geoattrd builds, runs and tests with, when any is missing:
# libgps-dev and libyaml-dev (the C shims, through pkg-config), gpsd and gpsd-clients (gpsfake, for the demo and
# the tests), systemd (systemd-analyze checks the units; the package's gpsd relay is
# systemd-socket-proxyd), prometheus (promtool checks the metric outputs in the tests) and
# python3-prometheus-client (its text parser reads the location's labels back in the escaping
# tests). Needs root only when something has to be installed.
set -euo pipefail

packages=(pkg-config libgps-dev libyaml-dev gpsd gpsd-clients systemd prometheus python3-prometheus-client)
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: these packages are missing and installing them needs root: ${missing[*]}" >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null
