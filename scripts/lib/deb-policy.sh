# Embedded in the package's postinst and prerm by scripts/make-deb.sh, hence POSIX sh (dash).
# units_may ACTION: whether the package's units may be started or stopped (ACTION) now: only
# under a running systemd (an image being built in a chroot has none), and only where no
# /usr/sbin/policy-rc.d forbids it (exit 101, as image builds and some containers set it), the
# rule invoke-rc.d and deb-systemd-invoke follow for every Debian package.
units_may() {
    [ -d /run/systemd/system ] || return 1
    if [ -x /usr/sbin/policy-rc.d ]; then
        policy=0
        /usr/sbin/policy-rc.d geoattrd.socket "$1" >/dev/null 2>&1 || policy=$?
        [ "$policy" -ne 101 ] || return 1
    fi
    return 0
}
