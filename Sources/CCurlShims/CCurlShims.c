// See include/CCurlShims.h for what each function does.
#include "CCurlShims.h"
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

CURLcode twobits_easy_setopt_long(CURL *h, CURLoption o, long v) {
    if (twobits_curl_weakens_verification(o, v)) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(h, o, v);
}

int twobits_curl_weakens_verification(CURLoption o, long v) {
    switch (o) {
    case CURLOPT_SSL_VERIFYPEER:
    case CURLOPT_PROXY_SSL_VERIFYPEER:
        return v != 1;
    case CURLOPT_SSL_VERIFYHOST:
    case CURLOPT_PROXY_SSL_VERIFYHOST:
        return v != 2;
    case CURLOPT_SSLVERSION:
        /* The low 16 bits are the minimum version (the high ones a maximum): never below TLS 1.2. */
        return (v & 0xffff) < CURL_SSLVERSION_TLSv1_2;
    default:
        return 0;
    }
}

long twobits_easy_info_long(CURL *h, CURLINFO info) {
    long value = 0;
    if (curl_easy_getinfo(h, info, &value) != CURLE_OK) return 0;
    return value;
}

curl_off_t twobits_easy_info_off(CURL *h, CURLINFO info) {
    curl_off_t value = 0;
    if (curl_easy_getinfo(h, info, &value) != CURLE_OK) return 0;
    return value;
}

CURLcode twobits_easy_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }

CURLcode twobits_easy_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }

CURLcode twobits_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }

CURLcode twobits_easy_setopt_write(CURL *h, CURLoption o, twobits_curl_write_fn v) { return curl_easy_setopt(h, o, v); }

CURLcode twobits_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }

long twobits_easy_response_code(CURL *h) {
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

CURLMcode twobits_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

CURLcode twobits_msg_result(CURLMsg *msg) { return msg->data.result; }

CURLMcode twobits_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }

CURLMcode twobits_multi_setopt_socketfn(CURLM *m, twobits_curl_socket_fn f) { return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f); }

CURLMcode twobits_multi_setopt_timerfn(CURLM *m, twobits_curl_timer_fn f) { return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, f); }

CURLcode twobits_easy_setopt_opensocket(CURL *h, twobits_curl_opensocket_fn f) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, f); }

CURLcode twobits_easy_setopt_closesocket(CURL *h, twobits_curl_closesocket_fn f) { return curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, f); }

CURLcode twobits_easy_setopt_prereq(CURL *h, twobits_curl_prereq_fn f) { return curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, f); }

curl_socket_t twobits_easy_active_socket(CURL *h) {
    curl_socket_t s = CURL_SOCKET_BAD;
    if (curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &s) != CURLE_OK) return CURL_SOCKET_BAD;
    return s;
}

static int twobits_tls_debug(CURL *h, curl_infotype type, char *data, size_t size, void *userp) {
    (void)h;
    static const char prefix[] = "SSL connection using ";
    size_t n = sizeof(prefix) - 1;
    twobits_tls_text *t = userp;
    if (type != CURLINFO_TEXT || size <= n || memcmp(data, prefix, n) != 0) return 0;
    size_t len = size - n;
    while (len > 0 && (data[n + len - 1] == '\n' || data[n + len - 1] == '\r')) len--;
    if (len >= sizeof(t->text)) len = sizeof(t->text) - 1;
    memcpy(t->text, data + n, len);
    t->text[len] = 0;
    return 0;
}

CURLcode twobits_easy_capture_tls(CURL *h, twobits_tls_text *t) {
    t->text[0] = 0;
    CURLcode r = curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, twobits_tls_debug);
    if (r == CURLE_OK) r = curl_easy_setopt(h, CURLOPT_DEBUGDATA, t);
    if (r == CURLE_OK) r = curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);
    return r;
}

curl_socket_t twobits_curl_open_socket(struct curl_sockaddr *address) {
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

int twobits_curl_close_socket(curl_socket_t item) { return close(item); }
