// Debian's libcurl headers (libcurl4-openssl-dev), as one module: includes only. TwoBits' own C over curl
// (fixed-signature wrappers of its variadic functions) is Sources/CCurlShims.
#ifndef TWOBITS_CCURL_SHIM_H
#define TWOBITS_CCURL_SHIM_H
#include <curl/curl.h>
#include <sys/socket.h>
#include <unistd.h>
#endif
