// The yardstick of the socket API's load benchmark: a minimal HTTP/1.1 server in C,
// one thread with epoll, answering every request on a Unix socket with the same 300-byte body.
// It parses nothing but the end of each request head, so it is about as fast as a server on
// this socket can be; geoattrd's target is half its throughput in the same conditions, and
// bench-api.sh measures both in the same run so that the ratio holds on any machine.
// Usage: uds-reference SOCKET   (serves until killed)
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define BODY_BYTES 300
#define MAX_EVENTS 256

static char response[512];
static size_t response_length;

// Bytes of a request head seen so far that may be the start of "\r\n\r\n", per descriptor.
static unsigned char matched[65536];

static void serve(int fd) {
    char buffer[16384];
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            close(fd);
            return;
        }
        if (n < 0) return;
        size_t answers = 0;
        unsigned char state = matched[fd];
        for (ssize_t i = 0; i < n; i++) {
            char c = buffer[i];
            if ((state == 0 || state == 2) && c == '\r') state++;
            else if ((state == 1 || state == 3) && c == '\n') state++;
            else state = c == '\r' ? 1 : 0;
            if (state == 4) {
                answers++;
                state = 0;
            }
        }
        matched[fd] = state;
        for (size_t a = 0; a < answers; a++) {
            if (write(fd, response, response_length) != (ssize_t)response_length) {
                close(fd);
                return;
            }
        }
        if ((size_t)n < sizeof buffer) return;
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s SOCKET\n", argv[0]);
        return 64;
    }
    char body[BODY_BYTES + 1];
    memset(body, 'x', BODY_BYTES);
    body[BODY_BYTES] = 0;
    response_length = (size_t)snprintf(response, sizeof response,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s", BODY_BYTES, body);

    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (listener < 0 || strlen(argv[1]) >= sizeof address.sun_path) {
        perror("uds-reference: socket");
        return 71;
    }
    strcpy(address.sun_path, argv[1]);
    unlink(argv[1]);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) < 0 || listen(listener, 1024) < 0) {
        perror("uds-reference: bind");
        return 71;
    }
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
    struct epoll_event events[MAX_EVENTS];
    for (;;) {
        int ready = epoll_wait(epoll, events, MAX_EVENTS, -1);
        for (int i = 0; i < ready; i++) {
            int fd = events[i].data.fd;
            if (fd != listener) {
                serve(fd);
                continue;
            }
            int client;
            while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                if (client >= (int)sizeof matched) {
                    close(client);
                    continue;
                }
                matched[client] = 0;
                struct epoll_event client_event = {.events = EPOLLIN, .data.fd = client};
                epoll_ctl(epoll, EPOLL_CTL_ADD, client, &client_event);
            }
        }
    }
}
