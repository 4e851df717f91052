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

/// Starts a daemon bound to an IPv4 address (dotted quad) and port (0 picks a free one).
static inline struct MHD_Daemon *twobits_mhd_start(unsigned int flags, const char *ipv4, uint16_t port,
    twobits_mhd_access_fn access, void *access_cls, twobits_mhd_completed_fn completed, void *completed_cls,
    unsigned int thread_pool_size, unsigned int connection_limit, unsigned int connection_timeout_s,
    size_t memory_limit)
{
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    if (inet_pton(AF_INET, ipv4, &addr.sin_addr) != 1) return NULL;
    return MHD_start_daemon(flags, port, NULL, NULL, access, access_cls,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)4096,
        MHD_OPTION_END);
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
#endif
