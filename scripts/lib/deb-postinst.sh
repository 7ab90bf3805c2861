# The package's postinst after its preamble (scripts/make-deb.sh writes #!/bin/sh, set -e, the
# runtime directory's expected names and scripts/lib/run-dir-allowlist.sh and
# scripts/lib/deb-policy.sh before it). POSIX sh: dash runs it.
if [ "$1" = "configure" ]; then
    # An upgrade from the layout where clients (group geoattr) could write /run/geoattrd: the
    # group geoattr-state is new, and supervisors must be added to it.
    if getent passwd geoattrd >/dev/null && ! getent group geoattr-state >/dev/null; then
        echo "geoattrd: /run/geoattrd/state is now writable by group geoattr-state only (and /run/geoattrd by geoattrd alone):" >&2
        echo "geoattrd: add device supervisors to it (usermod -aG geoattr-state USER); they write the file in place" >&2
    fi
    systemd-sysusers geoattrd.conf >/dev/null 2>&1 || systemd-sysusers >/dev/null 2>&1 || true
    # Only on a running system. Not booted (an image built in a chroot, where /proc may be absent
    # and nothing may start): /run there is not the runtime's, which is a new tmpfs at every boot;
    # at the first boot systemd-tmpfiles-setup.service lays out /run/geoattrd and /var/lib/geoattrd
    # from tmpfiles.d, and systemd-sysusers.service makes the users and groups if the call above
    # could not. Nothing of the package runs there: no unit starts, and geoattrd itself runs only
    # for the clean-up's configuration check.
    if [ -d /run/systemd/system ]; then
        # The runtime layout (tmpfiles.d/geoattrd.conf), /run/geoattrd itself first: geoattrd:geoattrd
        # 0755, so that no client can plant anything there any more. Not yet what tmpfiles.d would
        # re-own or fix in it (the state file, the textfile directory): what a client left at those
        # paths must go, not become geoattrd's.
        excluded=
        for name in $run_files $run_dirs; do excluded="$excluded --exclude-prefix=$run_dir/$name"; done
        systemd-tmpfiles --create $excluded geoattrd.conf >/dev/null 2>&1 || true
        # Then only what geoattrd and systemd put there stays, each as the right kind of file with the
        # right owner (a regular state file of geoattrd's, content kept; geoattrd's sockets; the
        # textfile directory; the output files the configuration names), before any socket starts
        # again. The prerm has stopped the daemon and its sockets, which systemd binds anew. The output
        # files' paths as geoattrd reads the configuration, in the unit's clean environment; when it
        # cannot, none stays (the daemon writes them again).
        settings=$(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin /usr/bin/geoattrd --config /etc/geoattrd/geoattrd.yaml --check-config 2>/dev/null) ||
            settings=
        owner=$(id -u geoattrd 2>/dev/null) || owner=0
        clean_run_dir "$owner" "$settings"
        # What is missing is created, and the state file's and the textfile directory's owner, group
        # and mode fixed (geoattrd:geoattr-state 0660, geoattrd:geoattr-metrics 2750); then inside the
        # textfile directory, closed to clients now, only the output files stay.
        systemd-tmpfiles --create geoattrd.conf >/dev/null 2>&1 ||
            echo "geoattrd: systemd-tmpfiles --create geoattrd.conf failed: run it again to see why" >&2
        clean_run_subdirs "$owner" "$settings"
        systemctl daemon-reload >/dev/null 2>&1 || true
    fi
    # geoattrd-gpsd.socket: gpsd's port inside geoattrd's private network (docs/operating.md, Units).
    deb-systemd-helper enable geoattrd.socket geoattrd-gpsd.socket >/dev/null 2>&1 ||
        systemctl enable geoattrd.socket geoattrd-gpsd.socket >/dev/null 2>&1 || true
    # Where no unit may start (not booted, or a policy-rc.d that forbids it), the units are
    # enabled and start at the next boot.
    if units_may start; then
        # The port guards where they run (gpsd's, where the operator enabled it; the metrics port's,
        # with its socket), with this package's script: reloaded (the table replaced whole, never
        # absent), or restarted where no watcher runs (a guard of 0.4, a oneshot), which then
        # starts one (the table is gone for the moment of the restart).
        for guard in geoattrd-gpsd-guard.service geoattrd-metrics-guard.service; do
            systemctl --quiet is-active "$guard" 2>/dev/null || continue
            if [ "$(systemctl show -p MainPID --value "$guard" 2>/dev/null)" = 0 ]; then
                systemctl restart "$guard" >/dev/null 2>&1 || echo "geoattrd: $guard did not restart: systemctl status $guard" >&2
            else
                systemctl reload "$guard" >/dev/null 2>&1 || echo "geoattrd: $guard did not reload: systemctl status $guard" >&2
            fi
        done
        # The Prometheus sockets are the operator's to enable; prerm stopped those that were, and
        # they start again with the others, before any client can start the daemon without them.
        sockets="geoattrd.socket geoattrd-gpsd.socket"
        for unit in geoattrd-metrics.socket geoattrd-metrics-proxy.socket; do
            if systemctl --quiet is-enabled "$unit" 2>/dev/null; then sockets="$sockets $unit"; fi
        done
        systemctl start $sockets >/dev/null 2>&1 || true
        # An enabled service runs without a client (the Collector and node_exporter read files and
        # never connect): prerm stopped it, and it starts again here; so does one that was running
        # when this package's prerm stopped it (an older version's prerm leaves no mark).
        was_active=
        if [ -e /run/geoattrd.upgrade-active ]; then was_active=1; rm -f /run/geoattrd.upgrade-active; fi
        if [ -n "$was_active" ] || systemctl --quiet is-enabled geoattrd.service 2>/dev/null; then
            systemctl start geoattrd.service >/dev/null 2>&1 ||
                echo "geoattrd: geoattrd.service did not start: systemctl status geoattrd" >&2
        fi
    fi
fi
exit 0
