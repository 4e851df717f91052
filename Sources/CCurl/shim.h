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
static inline void *twobits_easy_private(CURL *h) {
    char *p = NULL;
    curl_easy_getinfo(h, CURLINFO_PRIVATE, &p);
    return p;
}
static inline CURLMcode twobits_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

/// The result code of a finished transfer (CURLMsg keeps it in a union).
static inline CURLcode twobits_msg_result(CURLMsg *msg) { return msg->data.result; }
#endif
