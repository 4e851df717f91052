// See include/CMicroHTTPDShims.h for what each function does.
#include "CMicroHTTPDShims.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

/// Leaves a URL or query component exactly as received: routing is done on the raw path (a `%2f` must
/// never become a separator, a `%00` never a terminator) and the server decodes query values itself.
static size_t twobits_mhd_keep_escaped(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls; (void)connection;
    return strlen(s);
}

struct MHD_Daemon *twobits_mhd_start(unsigned int flags, const char *ipv4, uint16_t port,
    twobits_mhd_accept_fn accept_policy, twobits_mhd_access_fn access, twobits_mhd_completed_fn completed,
    twobits_mhd_uri_log_fn uri_log, twobits_mhd_notify_connection_fn notify_connection, void *cls,
    struct twobits_mhd_limits limits) {
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    if (inet_pton(AF_INET, ipv4, &addr.sin_addr) != 1) return NULL;
    return MHD_start_daemon(flags, port, accept_policy, cls, access, cls,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
        MHD_OPTION_NOTIFY_COMPLETED, completed, cls,
        MHD_OPTION_URI_LOG_CALLBACK, uri_log, cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, cls,
        MHD_OPTION_UNESCAPE_CALLBACK, twobits_mhd_keep_escaped, (void *)NULL,
        MHD_OPTION_CONNECTION_LIMIT, limits.connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, limits.connection_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits.memory_limit,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)4096,
        MHD_OPTION_END);
}

int twobits_port_is_free(const char *ipv4, uint16_t port) {
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    if (inet_pton(AF_INET, ipv4, &addr.sin_addr) != 1) return 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); /* a TIME_WAIT is not a listener */
    int free = bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
    close(fd);
    return free;
}

uint32_t twobits_mhd_ipv4(const struct sockaddr *addr) {
    if (addr == NULL || addr->sa_family != AF_INET) return 0;
    return ((const struct sockaddr_in *)addr)->sin_addr.s_addr;
}

const struct sockaddr *twobits_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

int twobits_mhd_epoll_fd(struct MHD_Daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);
    return info == NULL ? -1 : info->epoll_fd;
}

long long twobits_mhd_timeout(struct MHD_Daemon *d) {
    MHD_UNSIGNED_LONG_LONG ms = 0;
    if (MHD_get_timeout(d, &ms) != MHD_YES) return -1;
    return (long long)ms;
}

int twobits_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

void *twobits_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

size_t twobits_mhd_request_header_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

uint16_t twobits_mhd_bound_port(struct MHD_Daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

unsigned int twobits_mhd_loop_flags(void) {
    return (unsigned int)(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO);
}
