// A keep-alive HTTP/1.1 load generator for a Unix domain socket (wrk speaks TCP only).
// One thread, epoll, N connections, each sending the next request as soon as the previous
// response is complete. Prints requests/s, latency percentiles, errors and its own CPU share,
// so it can be shown not to be the bottleneck.
// Usage: uds-load SOCKET PATH CONNECTIONS SECONDS
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fd;
    char buf[16384];
    size_t len;
    uint64_t sent_ns;
} conn_t;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s SOCKET PATH CONNECTIONS SECONDS\n", argv[0]);
        return 64;
    }
    const char *socket_path = argv[1];
    int nconn = atoi(argv[3]);
    double seconds = atof(argv[4]);
    char request[512];
    int reqlen = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: geoattrd\r\n\r\n", argv[2]);
    int ep = epoll_create1(0);
    conn_t *conns = calloc((size_t)nconn, sizeof *conns);
    size_t cap = 1u << 24, count = 0;
    uint32_t *lat_us = malloc(cap * sizeof *lat_us);
    uint64_t errors = 0;
    for (int i = 0; i < nconn; i++) {
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        strncpy(addr.sun_path, socket_path, sizeof addr.sun_path - 1);
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
            fprintf(stderr, "connect %d: %s\n", i, strerror(errno));
            return 1;
        }
        conns[i].fd = fd;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &conns[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    }
    uint64_t start = now_ns(), end = start + (uint64_t)(seconds * 1e9);
    for (int i = 0; i < nconn; i++) {
        conns[i].sent_ns = now_ns();
        if (write(conns[i].fd, request, (size_t)reqlen) != reqlen) errors++;
    }
    struct epoll_event events[256];
    int open_conns = nconn;
    while (open_conns > 0) {
        int n = epoll_wait(ep, events, 256, 1000);
        uint64_t t = now_ns();
        for (int e = 0; e < n; e++) {
            conn_t *c = events[e].data.ptr;
            ssize_t r = read(c->fd, c->buf + c->len, sizeof c->buf - c->len - 1);
            if (r <= 0) {
                errors++;
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                close(c->fd);
                open_conns--;
                continue;
            }
            c->len += (size_t)r;
            c->buf[c->len] = 0;
            for (;;) {
                char *header_end = strstr(c->buf, "\r\n\r\n");
                if (!header_end) break;
                char *cl = strcasestr(c->buf, "content-length:");
                size_t body = cl && cl < header_end ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
                size_t total = (size_t)(header_end + 4 - c->buf) + body;
                if (c->len < total) break;
                if (strncmp(c->buf, "HTTP/1.1 200", 12) != 0) errors++;
                if (count < cap) lat_us[count++] = (uint32_t)((t - c->sent_ns) / 1000);
                memmove(c->buf, c->buf + total, c->len - total);
                c->len -= total;
                c->buf[c->len] = 0;
                if (t < end) {
                    c->sent_ns = now_ns();
                    if (write(c->fd, request, (size_t)reqlen) != reqlen) errors++;
                } else {
                    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                    close(c->fd);
                    open_conns--;
                }
            }
        }
        if (n == 0 && now_ns() > end + 5000000000ull) break;
    }
    double elapsed = (double)(now_ns() - start) / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    qsort(lat_us, count, sizeof *lat_us, cmp);
    printf("connections %d  requests %zu  %.0f req/s  p50 %.3f ms  p99 %.3f ms  max %.3f ms  errors %llu  load generator CPU %.0f%% of one core\n",
           nconn, count, count / elapsed, count ? lat_us[count / 2] / 1000.0 : 0, count ? lat_us[(size_t)(count * 0.99)] / 1000.0 : 0,
           count ? lat_us[count - 1] / 1000.0 : 0, (unsigned long long)errors, 100 * cpu / elapsed);
    return errors ? 1 : 0;
}
