// Fixed-signature wrappers for libmicrohttpd's variadic daemon start and union-valued info.
#ifndef TWOBITS_CMICROHTTPD_SHIM_H
#define TWOBITS_CMICROHTTPD_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <string.h>
#include <stdint.h>
#include <microhttpd.h>

typedef enum MHD_Result (*twobits_mhd_access_fn)(void *cls, struct MHD_Connection *connection,
    const char *url, const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **con_cls);
typedef void (*twobits_mhd_completed_fn)(void *cls, struct MHD_Connection *connection,
    void **con_cls, enum MHD_RequestTerminationCode toe);

typedef void *(*twobits_mhd_uri_log_fn)(void *cls, const char *uri, struct MHD_Connection *connection);
typedef void (*twobits_mhd_notify_connection_fn)(void *cls, struct MHD_Connection *connection,
    void **socket_context, enum MHD_ConnectionNotificationCode toe);

/// Leaves a URL or query component exactly as received: routing is done on the raw path (a `%2f` must
/// never become a separator, a `%00` never a terminator) and the server decodes query values itself.
static inline size_t twobits_mhd_keep_escaped(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls; (void)connection;
    return strlen(s);
}

/// What the daemon enforces itself, besides the callbacks.
struct twobits_mhd_limits {
    unsigned int thread_pool_size;
    unsigned int connection_limit;
    unsigned int per_ip_connection_limit;  /* 0: no cap */
    unsigned int connection_timeout_s;     /* an *idle* timeout: every byte restarts it */
    size_t memory_limit;                   /* per-connection pool: request line, headers, read buffer */
};

/// Starts a daemon bound to an IPv4 address (dotted quad) and port (0 picks a free one).
static inline struct MHD_Daemon *twobits_mhd_start(unsigned int flags, const char *ipv4, uint16_t port,
    twobits_mhd_access_fn access, void *access_cls, twobits_mhd_completed_fn completed, void *completed_cls,
    twobits_mhd_uri_log_fn uri_log, twobits_mhd_notify_connection_fn notify_connection, void *cls,
    struct twobits_mhd_limits limits)
{
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    if (inet_pton(AF_INET, ipv4, &addr.sin_addr) != 1) return NULL;
    return MHD_start_daemon(flags, port, NULL, NULL, access, access_cls,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_URI_LOG_CALLBACK, uri_log, cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, cls,
        MHD_OPTION_UNESCAPE_CALLBACK, twobits_mhd_keep_escaped, (void *)NULL,
        MHD_OPTION_THREAD_POOL_SIZE, limits.thread_pool_size,
        MHD_OPTION_CONNECTION_LIMIT, limits.connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, limits.per_ip_connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, limits.connection_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits.memory_limit,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)4096,
        MHD_OPTION_END);
}

/// The connection's socket, or -1.
static inline int twobits_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// What the connection-notification callback stored for this connection, or NULL.
static inline void *twobits_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/// Bytes of the request line and headers as received (valid from the first access-handler call), or 0.
static inline size_t twobits_mhd_request_header_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

static inline uint16_t twobits_mhd_bound_port(struct MHD_Daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// epoll on internal threads, suspend/resume for async handlers, and the fast path.
static inline unsigned int twobits_mhd_async_flags(void) {
    return (unsigned int)(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO);
}

typedef enum MHD_Result (*twobits_mhd_kv_fn)(void *cls, enum MHD_ValueKind kind, const char *key, const char *value);
typedef enum MHD_Result (*twobits_mhd_kv_n_fn)(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
    const char *value, size_t value_size);
#endif
