#include "CGPS.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gps.h>

#if GPSD_API_MAJOR_VERSION < 9
#error "geoattrd needs libgps API 9 or newer (gpsd 3.20+): timespec fix times and altHAE/altMSL"
#endif

// Swift imports these structs field by field; pin the layout it relies on.
_Static_assert(sizeof(CGPS_fix) == 112, "CGPS_fix layout changed");
_Static_assert(offsetof(CGPS_fix, latitude) == 32, "CGPS_fix layout changed");
_Static_assert(sizeof(CGPS_sky) == 16, "CGPS_sky layout changed");
_Static_assert(offsetof(CGPS_report, fix) == 24, "CGPS_report layout changed");

const int32_t CGPS_api_major = GPSD_API_MAJOR_VERSION;
const int32_t CGPS_api_minor = GPSD_API_MINOR_VERSION;

struct CGPS_connection {
    struct gps_data_t data;
};

// Positive codes are errno values; negative ones are libgps netlib codes.
enum { CGPS_ERROR_UNKNOWN = -1000, CGPS_ERROR_NO_MEMORY = -1001 };

int64_t CGPS_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

CGPS_connection *CGPS_open(const char *host, const char *port, int32_t *error_out) {
    CGPS_connection *connection = calloc(1, sizeof(*connection));
    if (connection == NULL) {
        *error_out = CGPS_ERROR_NO_MEMORY;
        return NULL;
    }
    errno = 0;
    int rc = gps_open(host, port, &connection->data);
    if (rc != 0) {
        // 3.22 returns -1 with errno holding a negative netlib code; 3.25+ may return the code
        // itself, and a failed connect() leaves a positive errno (or 0).
        int32_t code = rc < -1 ? rc : (errno != 0 ? errno : CGPS_ERROR_UNKNOWN);
        free(connection);
        *error_out = code;
        return NULL;
    }
    // libgps opens its socket without FD_CLOEXEC: a child process started meanwhile (a hook, a
    // test's gpsfake) would inherit it and keep the connection, and the receiver, open after
    // we close it. Measured: gpsd saw the hang-up 1.5 s late when a child was spawned.
    int flags = fcntl(connection->data.gps_fd, F_GETFD);
    if (flags >= 0) {
        fcntl(connection->data.gps_fd, F_SETFD, flags | FD_CLOEXEC);
    }
    *error_out = 0;
    return connection;
}

int32_t CGPS_watch(CGPS_connection *connection, bool enable) {
    // libgps write()s without MSG_NOSIGNAL. Block SIGPIPE on this thread for the call and
    // swallow one that became pending, so a closed connection is an error code, not a death.
    sigset_t pipe_set, previous;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &previous);

    errno = 0;
    unsigned int flags = enable ? (WATCH_ENABLE | WATCH_JSON) : WATCH_DISABLE;
    int rc = gps_stream(&connection->data, flags, NULL);
    int saved_errno = errno;

    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) && !sigismember(&previous, SIGPIPE)) {
        struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);

    if (rc == 0) {
        return 0;
    }
    return saved_errno != 0 ? saved_errno : CGPS_ERROR_UNKNOWN;
}

int32_t CGPS_fd(const CGPS_connection *connection) {
    return (int32_t)connection->data.gps_fd;
}

static void copy_fix(const struct gps_data_t *data, CGPS_fix *out) {
    const struct gps_fix_t *fix = &data->fix;
    memset(out, 0, sizeof(*out));
    out->mode = fix->mode;
#if GPSD_API_MAJOR_VERSION >= 10
    out->status = fix->status;
#else
    out->status = data->status;
#endif
    uint32_t flags = 0;
    if ((data->set & TIME_SET) && fix->time.tv_sec > 0) {
        flags |= CGPS_FIX_HAS_TIME;
        out->time_sec = (int64_t)fix->time.tv_sec;
        out->time_nsec = (int64_t)fix->time.tv_nsec;
    }
    out->latitude = out->longitude = NAN;
    if ((data->set & LATLON_SET) && isfinite(fix->latitude) && isfinite(fix->longitude)) {
        flags |= CGPS_FIX_HAS_LATLON;
        out->latitude = fix->latitude;
        out->longitude = fix->longitude;
    }
#define CGPS_COPY_FINITE(field, source, bit) \
    out->field = NAN;                         \
    if (isfinite(source)) {                   \
        out->field = (source);                \
        flags |= (bit);                       \
    }
    CGPS_COPY_FINITE(alt_hae, fix->altHAE, CGPS_FIX_HAS_ALT_HAE)
    CGPS_COPY_FINITE(alt_msl, fix->altMSL, CGPS_FIX_HAS_ALT_MSL)
    CGPS_COPY_FINITE(eph, fix->eph, CGPS_FIX_HAS_EPH)
    CGPS_COPY_FINITE(epx, fix->epx, CGPS_FIX_HAS_EPX)
    CGPS_COPY_FINITE(epy, fix->epy, CGPS_FIX_HAS_EPY)
    CGPS_COPY_FINITE(epv, fix->epv, CGPS_FIX_HAS_EPV)
    CGPS_COPY_FINITE(speed, fix->speed, CGPS_FIX_HAS_SPEED)
    CGPS_COPY_FINITE(track, fix->track, CGPS_FIX_HAS_TRACK)
#undef CGPS_COPY_FINITE
    out->flags = flags;
}

static void copy_sky(const struct gps_data_t *data, CGPS_sky *out) {
    memset(out, 0, sizeof(*out));
    int visible = data->satellites_visible;
    if (visible < 0) {
        visible = 0;
    }
    if (visible > MAXCHANNELS) {
        visible = MAXCHANNELS;
    }
    out->satellites_visible = visible;
    out->satellites_used = data->satellites_used;
    int with_signal = 0;
    for (int i = 0; i < visible; i++) {
        if (isfinite(data->skyview[i].ss) && data->skyview[i].ss > 0) {
            with_signal++;
        }
    }
    out->satellites_with_signal = with_signal;
}

static void fill_report(const struct gps_data_t *data, CGPS_report *out) {
    memset(out, 0, sizeof(*out));
    out->received_monotonic_ns = CGPS_monotonic_ns();
    out->received_realtime_ns = realtime_ns();
    // Each call parses one JSON line, and only a TPV sets STATUS_SET.
    if (data->set & STATUS_SET) {
        out->kind = CGPS_REPORT_TPV;
        copy_fix(data, &out->fix);
        // The TPV's "device" (libgps keeps it in dev.path); truncated, always terminated.
        (void)snprintf(out->device, sizeof(out->device), "%s", data->dev.path);
    } else if (data->set & SATELLITE_SET) {
        out->kind = CGPS_REPORT_SKY;
        copy_sky(data, &out->sky);
    } else if (data->set & DEVICELIST_SET) {
        out->kind = CGPS_REPORT_DEVICES;
        out->device_count = data->devices.ndevices;
    } else {
        out->kind = CGPS_REPORT_OTHER;
    }
}

int32_t CGPS_wait_read(CGPS_connection *connection, int32_t timeout_ms, int32_t wake_fd,
                       CGPS_report *out) {
    const int64_t deadline = CGPS_monotonic_ns() + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
    bool hung_up = false;
    for (;;) {
        // gps_read never blocks (the socket is non-blocking) and parses at most one line;
        // it returns 0 while only part of a line is buffered. libgps never clears `set`.
        connection->data.set = 0;
        int n = gps_read(&connection->data, NULL, 0);
        if (n < 0) {
            return CGPS_READ_CLOSED;
        }
        if (n > 0) {
            fill_report(&connection->data, out);
            return CGPS_READ_REPORT;
        }
        if (hung_up) {
            return CGPS_READ_CLOSED;
        }
        int64_t remaining_ns = deadline - CGPS_monotonic_ns();
        if (remaining_ns <= 0) {
            return CGPS_READ_TIMEOUT;
        }
        struct pollfd fds[2] = {
            {.fd = connection->data.gps_fd, .events = POLLIN},
            {.fd = wake_fd, .events = POLLIN},
        };
        int wait_ms = (int)((remaining_ns + 999999) / 1000000);
        int ready = poll(fds, wake_fd >= 0 ? 2 : 1, wait_ms);
        if (ready < 0) {
            if (errno == EINTR) {
                continue;
            }
            return CGPS_READ_POLL_ERROR;
        }
        if (wake_fd >= 0 && (fds[1].revents & POLLIN)) {
            return CGPS_READ_WOKEN;
        }
        // Readable or timed out: the next gps_read tells which. A hang-up with nothing left to
        // parse ends the connection instead of waking poll forever.
        hung_up = (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
    }
}

void CGPS_close(CGPS_connection *connection) {
    if (connection == NULL) {
        return;
    }
    gps_close(&connection->data);
    free(connection);
}

const char *CGPS_error_text(int32_t error) {
    if (error == CGPS_ERROR_NO_MEMORY) {
        return "out of memory";
    }
    if (error == CGPS_ERROR_UNKNOWN) {
        return "unknown libgps error";
    }
    if (error < 0) {
        return gps_errstr(error);
    }
    return strerror(error);
}
