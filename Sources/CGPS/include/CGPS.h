// A flat, fixed-layout view of libgps for Swift.
//
// `struct gps_data_t` changes size and layout between gpsd releases, even within one soname
// (24 KB in 3.22, 38 KB in 3.26+), so Swift must never import <gps.h>. This header declares only
// fixed-width types of our own; shim.c is compiled against the target machine's <gps.h> and
// copies what we need out of it. Symbols are prefixed with the module name.
#ifndef CGPS_H
#define CGPS_H

#include <stdbool.h>
#include <stdint.h>

/// An open connection to gpsd. Opaque: it owns a heap-allocated `struct gps_data_t`.
typedef struct CGPS_connection CGPS_connection;

/// Which fields of a `CGPS_fix` carry a value. A field whose bit is clear holds NaN (or 0).
enum {
    CGPS_FIX_HAS_TIME = 1u << 0,
    CGPS_FIX_HAS_LATLON = 1u << 1,
    CGPS_FIX_HAS_ALT_HAE = 1u << 2,
    CGPS_FIX_HAS_ALT_MSL = 1u << 3,
    CGPS_FIX_HAS_EPH = 1u << 4,
    CGPS_FIX_HAS_EPX = 1u << 5,
    CGPS_FIX_HAS_EPY = 1u << 6,
    CGPS_FIX_HAS_EPV = 1u << 7,
    CGPS_FIX_HAS_SPEED = 1u << 8,
    CGPS_FIX_HAS_TRACK = 1u << 9,
};

/// One TPV report. `mode` is gpsd's raw value: 0 unknown, 1 no fix, 2 2D, 3 3D.
/// `status` is gpsd's raw DGPS/RTK status; it reads 0 for an ordinary fix, so decide on `mode`.
typedef struct CGPS_fix {
    uint32_t flags;
    int32_t mode;
    int32_t status;
    int32_t reserved;
    int64_t time_sec;     // receiver UTC, valid with CGPS_FIX_HAS_TIME
    int64_t time_nsec;
    double latitude;      // degrees, valid with CGPS_FIX_HAS_LATLON
    double longitude;
    double alt_hae;       // metres above the ellipsoid
    double alt_msl;       // metres above mean sea level
    double eph;           // metres, gpsd's horizontal error estimate
    double epx;           // metres, longitude error estimate
    double epy;           // metres, latitude error estimate
    double epv;           // metres, vertical error estimate
    double speed;         // m/s
    double track;         // degrees from true north
} CGPS_fix;

/// One SKY report.
typedef struct CGPS_sky {
    int32_t satellites_visible;      // gpsd's nSat: satellites the receiver lists in view
    int32_t satellites_used;         // gpsd's uSat
    int32_t satellites_with_signal;  // listed satellites with a signal strength above 0
    int32_t reserved;
} CGPS_sky;

/// What kind of line `CGPS_wait_read` parsed.
enum {
    CGPS_REPORT_OTHER = 0,    // VERSION, WATCH, ERROR, ... : nothing to act on
    CGPS_REPORT_TPV = 1,
    CGPS_REPORT_SKY = 2,
    CGPS_REPORT_DEVICES = 3,
};

typedef struct CGPS_report {
    int32_t kind;
    int32_t device_count;             // valid for CGPS_REPORT_DEVICES
    int64_t received_monotonic_ns;    // CLOCK_MONOTONIC when the line was parsed
    int64_t received_realtime_ns;     // CLOCK_REALTIME when the line was parsed
    CGPS_fix fix;                     // valid for CGPS_REPORT_TPV
    CGPS_sky sky;                     // valid for CGPS_REPORT_SKY
    char device[128];                 // TPV: the device that sent it, NUL-terminated ("" unknown)
} CGPS_report;

/// Results of `CGPS_wait_read`.
enum {
    CGPS_READ_REPORT = 1,     // `out` holds one parsed line
    CGPS_READ_TIMEOUT = 0,    // no complete line within the timeout
    CGPS_READ_WOKEN = 2,      // the wake descriptor became readable (cancellation)
    CGPS_READ_CLOSED = -1,    // gpsd closed the connection, or the read failed
    CGPS_READ_POLL_ERROR = -2,
};

/// The libgps API version this shim was compiled against.
extern const int32_t CGPS_api_major;
extern const int32_t CGPS_api_minor;

/// Connects to gpsd (a blocking connect: instant on loopback). Returns NULL on failure with a
/// code for `CGPS_error_text` in `*error_out`.
CGPS_connection *CGPS_open(const char *host, const char *port, int32_t *error_out);

/// Enables or disables the JSON watch. Returns 0 or a code for `CGPS_error_text`.
/// Never raises SIGPIPE, even when gpsd already closed the connection.
int32_t CGPS_watch(CGPS_connection *connection, bool enable);

/// The connection's socket, for callers that poll it themselves.
int32_t CGPS_fd(const CGPS_connection *connection);

/// Returns the next complete line, waiting at most `timeout_ms` for one. Polls the socket (and
/// `wake_fd` unless it is -1) instead of spinning while half a line is buffered.
int32_t CGPS_wait_read(CGPS_connection *connection, int32_t timeout_ms, int32_t wake_fd,
                       CGPS_report *out);

/// Closes the connection and frees it. NULL is ignored.
void CGPS_close(CGPS_connection *connection);

/// A human-readable text for a code returned by `CGPS_open` or `CGPS_watch`.
const char *CGPS_error_text(int32_t error);

/// CLOCK_MONOTONIC in nanoseconds.
int64_t CGPS_monotonic_ns(void);

#endif
