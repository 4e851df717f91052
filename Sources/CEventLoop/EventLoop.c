// See include/CEventLoop.h for what each function does.
#include "CEventLoop.h"
#include <poll.h>
#ifndef POLLRDHUP
#define POLLRDHUP 0x2000 /* Linux's value; <poll.h> names it only under _GNU_SOURCE */
#endif

int twobits_loop_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int twobits_loop_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int twobits_loop_watch(int epfd, int fd, int events, int watched) {
    if (events == 0) return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
    struct epoll_event ev = {0};
    ev.data.fd = fd;
    if (events & TWOBITS_LOOP_READ) ev.events |= EPOLLIN;
    if (events & TWOBITS_LOOP_WRITE) ev.events |= EPOLLOUT;
    if (events & TWOBITS_LOOP_HANGUP) ev.events |= EPOLLRDHUP; /* EPOLLHUP and EPOLLERR come always */
    if (watched) {
        if (epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) == 0) return 0;
        if (errno == ENOENT) return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
        return -1;
    }
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0) return 0;
    if (errno == EEXIST) return epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
    return -1;
}

int twobits_loop_wait(int epfd, int *fds, int *flags, int max, int timeout_ms) {
    struct epoll_event events[128];
    if (max > 128) max = 128;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        fds[i] = events[i].data.fd;
        int f = 0;
        if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) f |= TWOBITS_LOOP_READ;
        if (events[i].events & EPOLLOUT) f |= TWOBITS_LOOP_WRITE;
        if (events[i].events & EPOLLERR) f |= TWOBITS_LOOP_ERROR;
        if (events[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) f |= TWOBITS_LOOP_HANGUP;
        flags[i] = f;
    }
    return n;
}

void twobits_loop_wake(int fd) { uint64_t one = 1; ssize_t r = write(fd, &one, sizeof one); (void)r; }

void twobits_loop_drain(int fd) { uint64_t v; ssize_t r = read(fd, &v, sizeof v); (void)r; }

uint64_t twobits_loop_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

long twobits_loop_thread_id(void) { return (long)syscall(SYS_gettid); }

void twobits_name_current_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

int twobits_loop_peer_hung_up(int fd) {
    struct pollfd p = { .fd = fd, .events = POLLRDHUP, .revents = 0 };
    if (poll(&p, 1, 0) != 1) return 0;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}
