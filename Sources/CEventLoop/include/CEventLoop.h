// epoll, eventfd and the monotonic clock for the event loops (glibc's headers are not in Swift's Glibc
// module). Only the loop thread touches its epoll set, except `twobits_loop_wake`, which any thread may call.
// TwoBits' own C: the definitions are in EventLoop.c, compiled with -Wall -Wextra -Werror (Package.swift).
#ifndef TWOBITS_CEVENTLOOP_SHIM_H
#define TWOBITS_CEVENTLOOP_SHIM_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <stdint.h>
#include <time.h>
#include <errno.h>
#include <sys/syscall.h>
#include <sys/prctl.h>

enum {
    TWOBITS_LOOP_READ = 1,
    TWOBITS_LOOP_WRITE = 2,
    TWOBITS_LOOP_ERROR = 4,
    /// The peer closed its side or the connection broke (EPOLLRDHUP, EPOLLHUP, EPOLLERR); watched without
    /// EPOLLIN, so bytes the peer sends meanwhile (a pipelined request) do not wake the loop.
    TWOBITS_LOOP_HANGUP = 8,
};

int twobits_loop_epoll_create(void);
int twobits_loop_eventfd_create(void);

/// Adds, changes (`events` != 0) or removes (`events` == 0) `fd` in the set, level-triggered.
/// `watched`: the caller believes `fd` is in the set already (MOD first), or not (ADD first); the other
/// is tried when the kernel disagrees (a descriptor closed and reused leaves the set on its own).
int twobits_loop_watch(int epfd, int fd, int events, int watched);

/// Waits up to `timeout_ms` (-1: forever); fills `fds` and TWOBITS_LOOP_* flags. Returns the count.
int twobits_loop_wait(int epfd, int *fds, int *flags, int max, int timeout_ms);

/// Whether the peer of socket `fd` has closed its side or the connection broke, as of now (a poll that
/// does not wait, and reads nothing): confirms a hang-up epoll reported, which may be stale.
int twobits_loop_peer_hung_up(int fd);

void twobits_loop_wake(int fd);
void twobits_loop_drain(int fd);

/// Nanoseconds on CLOCK_MONOTONIC.
uint64_t twobits_loop_now_ns(void);

/// The calling thread's kernel id (for logs and the one-thread-per-request test).
long twobits_loop_thread_id(void);
/// Names the calling thread (shown by `top -H`; the kernel keeps 15 bytes).
void twobits_name_current_thread(const char *name);
#endif
