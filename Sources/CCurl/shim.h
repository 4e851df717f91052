// Fixed-signature wrappers for libcurl's variadic option setters and info getters.
#ifndef TWOBITS_CCURL_SHIM_H
#define TWOBITS_CCURL_SHIM_H
#include <curl/curl.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* curl_multi_socket_action on an event loop: curl names the sockets to watch and its next timeout through
   these callbacks; the loop (EventLoops) owns the epoll set. */
typedef int (*twobits_curl_socket_fn)(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp);
typedef int (*twobits_curl_timer_fn)(CURLM *multi, long timeout_ms, void *userp);

static inline CURLMcode twobits_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode twobits_multi_setopt_socketfn(CURLM *m, twobits_curl_socket_fn f) { return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f); }
static inline CURLMcode twobits_multi_setopt_timerfn(CURLM *m, twobits_curl_timer_fn f) { return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, f); }

/* The sockets themselves: a multi hears of each socket curl opens and closes, so it can keep an idle
   connection's socket in its epoll set between calls (CurlMulti). */
typedef curl_socket_t (*twobits_curl_opensocket_fn)(void *clientp, curlsocktype purpose, struct curl_sockaddr *address);
typedef int (*twobits_curl_closesocket_fn)(void *clientp, curl_socket_t item);

static inline CURLcode twobits_easy_setopt_opensocket(CURL *h, twobits_curl_opensocket_fn f) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, f); }
static inline CURLcode twobits_easy_setopt_closesocket(CURL *h, twobits_curl_closesocket_fn f) { return curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, f); }

/// What curl's own socket opening does, close-on-exec added.
static inline curl_socket_t twobits_curl_open_socket(struct curl_sockaddr *address) {
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}
static inline int twobits_curl_close_socket(curl_socket_t item) { return close(item); }
#endif
