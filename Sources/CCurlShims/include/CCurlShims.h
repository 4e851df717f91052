// TwoBits' own C over libcurl (libcurl4-openssl-dev): fixed-signature wrappers for its variadic option setters
// and info getters, and the sockets curl opens through TwoBits (close-on-exec).
// The definitions are in CCurlShims.c, compiled with -Wall -Wextra -Werror (Package.swift).
#ifndef TWOBITS_CCURL_SHIMS_H
#define TWOBITS_CCURL_SHIMS_H
#include <curl/curl.h>
#include <stddef.h>

typedef size_t (*twobits_curl_write_fn)(char *ptr, size_t size, size_t nmemb, void *userdata);

/// Refuses (CURLE_BAD_FUNCTION_ARGUMENT, nothing set) any value of CURLOPT_SSL_VERIFYPEER/VERIFYHOST (and the
/// proxy's) but curl's defaults, 1 and 2, and a CURLOPT_SSLVERSION minimum below TLS 1.2: TLS to Apple is always
/// verified, whatever a caller passes.
CURLcode twobits_easy_setopt_long(CURL *h, CURLoption o, long v);
/// Whether setting `o` to `v` would weaken certificate or host-name verification (what the setter refuses).
int twobits_curl_weakens_verification(CURLoption o, long v);
CURLcode twobits_easy_setopt_str(CURL *h, CURLoption o, const char *v);
CURLcode twobits_easy_setopt_ptr(CURL *h, CURLoption o, void *v);
CURLcode twobits_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v);
CURLcode twobits_easy_setopt_write(CURL *h, CURLoption o, twobits_curl_write_fn v);
CURLcode twobits_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v);

long twobits_easy_response_code(CURL *h);
/// A long CURLINFO_* of the last transfer; 0 when curl has none.
long twobits_easy_info_long(CURL *h, CURLINFO info);
/// A curl_off_t CURLINFO_* (the *_TIME_T ones, in microseconds); 0 when curl has none.
curl_off_t twobits_easy_info_off(CURL *h, CURLINFO info);
CURLMcode twobits_multi_setopt_long(CURLM *m, CURLMoption o, long v);

/// The result code of a finished transfer (CURLMsg keeps it in a union).
CURLcode twobits_msg_result(CURLMsg *msg);

/* curl_multi_socket_action on an event loop: curl names the sockets to watch and its next timeout through
   these callbacks; the loop (EventLoops) owns the epoll set. */
typedef int (*twobits_curl_socket_fn)(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp);
typedef int (*twobits_curl_timer_fn)(CURLM *multi, long timeout_ms, void *userp);

CURLMcode twobits_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v);
CURLMcode twobits_multi_setopt_socketfn(CURLM *m, twobits_curl_socket_fn f);
CURLMcode twobits_multi_setopt_timerfn(CURLM *m, twobits_curl_timer_fn f);

/* The sockets themselves: a multi hears of each socket curl opens and closes, so it can keep an idle
   connection's socket in its epoll set between calls (CurlMulti). */
typedef curl_socket_t (*twobits_curl_opensocket_fn)(void *clientp, curlsocktype purpose, struct curl_sockaddr *address);
typedef int (*twobits_curl_closesocket_fn)(void *clientp, curl_socket_t item);

CURLcode twobits_easy_setopt_opensocket(CURL *h, twobits_curl_opensocket_fn f);
CURLcode twobits_easy_setopt_closesocket(CURL *h, twobits_curl_closesocket_fn f);

/* The moment a transfer's connection is ready (made or reused) and its request about to go: a multi admits
   the calls waiting for the streams of a connection that was being opened (CurlMulti+Streams). */
typedef int (*twobits_curl_prereq_fn)(void *clientp, char *primary_ip, char *local_ip, int primary_port, int local_port);

CURLcode twobits_easy_setopt_prereq(CURL *h, twobits_curl_prereq_fn f);
/// The socket of the transfer's connection (CURLINFO_ACTIVESOCKET); CURL_SOCKET_BAD when it has none.
curl_socket_t twobits_easy_active_socket(CURL *h);

/* A diagnostic call (twobits apple-check): curl's verbose text, read for the line naming the TLS version and
   cipher ("SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384"), copied into `t` (NUL-terminated), which must
   outlive the transfer. */
typedef struct { char text[96]; } twobits_tls_text;
CURLcode twobits_easy_capture_tls(CURL *h, twobits_tls_text *t);

/// What curl's own socket opening does, close-on-exec added.
curl_socket_t twobits_curl_open_socket(struct curl_sockaddr *address);
int twobits_curl_close_socket(curl_socket_t item);
#endif
