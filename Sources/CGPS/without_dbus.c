// libgps's D-Bus reader, left out of a static link.
//
// The packages link libgps statically (Debian 12's libgps.a), so that one binary runs on every
// Debian release whatever soname its libgps has. libgps.a's gps_open and gps_mainloop refer to
// its D-Bus reader (libgps_dbus.o), which needs libdbus; that reader is used only when the host
// passed to gps_open is the string GPSD_DBUS_EXPORT, which this shim never passes: it connects
// to gpsd over TCP alone (CGPS_open). Defining the two entry points here keeps libgps_dbus.o,
// and with it libdbus, out of the link. Compiled only for that link (scripts/make-deb.sh defines
// CGPS_STATIC_LIBGPS); a build against the shared libgps leaves libgps's own in place.
#ifdef CGPS_STATIC_LIBGPS

#include <errno.h>

#include <gps.h>

// The prototypes of libgps's private header (libgps/libgps.h), which Debian does not install.
int gps_dbus_open(struct gps_data_t *gpsdata);
int gps_dbus_mainloop(struct gps_data_t *gpsdata, int timeout, void (*hook)(struct gps_data_t *));

int gps_dbus_open(struct gps_data_t *gpsdata) {
    (void)gpsdata;
    errno = ENOTSUP;
    return -1;
}

int gps_dbus_mainloop(struct gps_data_t *gpsdata, int timeout, void (*hook)(struct gps_data_t *)) {
    (void)gpsdata;
    (void)timeout;
    (void)hook;
    errno = ENOTSUP;
    return -1;
}

#endif
