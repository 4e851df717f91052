// Fixed-signature wrappers for libcurl's variadic option setters and info getters.
#ifndef TWOBITS_CCURL_SHIM_H
#define TWOBITS_CCURL_SHIM_H
#include <curl/curl.h>

typedef size_t (*twobits_curl_write_fn)(char *ptr, size_t size, size_t nmemb, void *userdata);

static inline CURLcode twobits_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode twobits_easy_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode twobits_easy_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode twobits_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode twobits_easy_setopt_write(CURL *h, CURLoption o, twobits_curl_write_fn v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode twobits_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }

static inline long twobits_easy_response_code(CURL *h) {
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    return code;
}
static inline CURLMcode twobits_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

/// The result code of a finished transfer (CURLMsg keeps it in a union).
static inline CURLcode twobits_msg_result(CURLMsg *msg) { return msg->data.result; }

/* The event loop under curl_multi_socket_action: epoll for curl's sockets, an eventfd to wake the
   loop when work is submitted from other threads. Only the loop thread touches epoll. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <errno.h>

typedef int (*twobits_curl_socket_fn)(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp);
typedef int (*twobits_curl_timer_fn)(CURLM *multi, long timeout_ms, void *userp);

static inline CURLMcode twobits_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode twobits_multi_setopt_socketfn(CURLM *m, twobits_curl_socket_fn f) { return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f); }
static inline CURLMcode twobits_multi_setopt_timerfn(CURLM *m, twobits_curl_timer_fn f) { return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, f); }

static inline int twobits_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
static inline int twobits_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/// Registers, changes or removes `fd` in epoll according to curl's CURL_POLL_* request.
static inline int twobits_epoll_apply(int epfd, int fd, int what) {
    if (what == CURL_POLL_REMOVE) { epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL); return 0; }
    struct epoll_event ev = {0};
    ev.data.fd = fd;
    if (what & CURL_POLL_IN) ev.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) ev.events |= EPOLLOUT;
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT) return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
    return 0;
}

/// Watches the wake-up eventfd for reading.
static inline int twobits_epoll_watch_read(int epfd, int fd) {
    struct epoll_event ev = {0};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/// Waits for events; fills `fds` and curl's CURL_CSELECT_* flags. Returns the count (0 on timeout, -1 on error).
static inline int twobits_epoll_wait(int epfd, int *fds, int *flags, int max, int timeout_ms) {
    struct epoll_event events[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        fds[i] = events[i].data.fd;
        int f = 0;
        if (events[i].events & (EPOLLIN | EPOLLHUP)) f |= CURL_CSELECT_IN;
        if (events[i].events & EPOLLOUT) f |= CURL_CSELECT_OUT;
        if (events[i].events & EPOLLERR) f |= CURL_CSELECT_ERR;
        flags[i] = f;
    }
    return n;
}

static inline void twobits_eventfd_signal(int fd) { uint64_t one = 1; ssize_t r = write(fd, &one, sizeof one); (void)r; }
static inline void twobits_eventfd_drain(int fd) { uint64_t v; ssize_t r = read(fd, &v, sizeof v); (void)r; }
#endif
