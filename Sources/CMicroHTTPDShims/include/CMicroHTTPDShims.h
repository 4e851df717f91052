// TwoBits' own C over libmicrohttpd (libmicrohttpd-dev): fixed-signature wrappers for its variadic daemon start
// and union-valued info, and the port check. The definitions are in CMicroHTTPDShims.c, compiled with
// -Wall -Wextra -Werror (Package.swift).
#ifndef TWOBITS_CMICROHTTPD_SHIMS_H
#define TWOBITS_CMICROHTTPD_SHIMS_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stddef.h>
#include <microhttpd.h>

typedef enum MHD_Result (*twobits_mhd_access_fn)(void *cls, struct MHD_Connection *connection,
    const char *url, const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **con_cls);
typedef void (*twobits_mhd_completed_fn)(void *cls, struct MHD_Connection *connection,
    void **con_cls, enum MHD_RequestTerminationCode toe);

typedef void *(*twobits_mhd_uri_log_fn)(void *cls, const char *uri, struct MHD_Connection *connection);
typedef void (*twobits_mhd_notify_connection_fn)(void *cls, struct MHD_Connection *connection,
    void **socket_context, enum MHD_ConnectionNotificationCode toe);

/// What the daemon enforces itself, besides the callbacks.
struct twobits_mhd_limits {
    unsigned int connection_limit;         /* this daemon's connections (one daemon per event loop) */
    unsigned int connection_timeout_s;     /* an *idle* timeout: every byte restarts it */
    size_t memory_limit;                   /* per-connection pool: request line, headers, read buffer */
};

typedef enum MHD_Result (*twobits_mhd_accept_fn)(void *cls, const struct sockaddr *addr, socklen_t addrlen);

/// Starts a daemon bound to an IPv4 address (dotted quad) and port (0 picks a free one), run by the
/// caller's event loop (no thread of its own: see twobits_mhd_loop_flags). The listening socket has
/// SO_REUSEPORT, so one daemon per loop can share the port and the kernel spreads connections over them.
struct MHD_Daemon *twobits_mhd_start(unsigned int flags, const char *ipv4, uint16_t port,
    twobits_mhd_accept_fn accept_policy, twobits_mhd_access_fn access, twobits_mhd_completed_fn completed,
    twobits_mhd_uri_log_fn uri_log, twobits_mhd_notify_connection_fn notify_connection, void *cls,
    struct twobits_mhd_limits limits);

/// 1 when nothing listens on ipv4:port. The daemons bind with SO_REUSEPORT, which would let them
/// share a port with another process that set it too: this plain bind (no SO_REUSEPORT) fails against
/// any listener, so a busy port is refused as it always was.
int twobits_port_is_free(const char *ipv4, uint16_t port);

/// The IPv4 address of a peer as one number (0 for another family).
uint32_t twobits_mhd_ipv4(const struct sockaddr *addr);

/// The peer address of a connection, or NULL.
const struct sockaddr *twobits_mhd_client_address(struct MHD_Connection *connection);

/// The daemon's own epoll set, for the event loop's epoll set, or -1.
int twobits_mhd_epoll_fd(struct MHD_Daemon *d);

/// Milliseconds until the daemon needs MHD_run for a timeout (0: it has work now), or -1 for none.
long long twobits_mhd_timeout(struct MHD_Daemon *d);

/// The connection's socket, or -1.
int twobits_mhd_connection_fd(struct MHD_Connection *connection);

/// What the connection-notification callback stored for this connection, or NULL.
void *twobits_mhd_socket_context(struct MHD_Connection *connection);

/// Bytes of the request line and headers as received (valid from the first access-handler call), or 0.
size_t twobits_mhd_request_header_size(struct MHD_Connection *connection);

uint16_t twobits_mhd_bound_port(struct MHD_Daemon *d);

/// epoll driven by the caller's event loop (no internal thread), suspend/resume for async handlers,
/// and the fast path.
unsigned int twobits_mhd_loop_flags(void);

typedef enum MHD_Result (*twobits_mhd_kv_fn)(void *cls, enum MHD_ValueKind kind, const char *key, const char *value);
typedef enum MHD_Result (*twobits_mhd_kv_n_fn)(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
    const char *value, size_t value_size);
#endif
