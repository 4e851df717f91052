// Debian's libmicrohttpd headers (libmicrohttpd-dev), as one module: includes only. TwoBits' own C over MHD
// (fixed-signature wrappers of its variadic daemon start and union-valued info) is Sources/CMicroHTTPDShims.
#ifndef TWOBITS_CMICROHTTPD_SHIM_H
#define TWOBITS_CMICROHTTPD_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <microhttpd.h>
#endif
