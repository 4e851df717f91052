import FoundationEssentials
import Glibc

/// Tells a service manager (systemd's `Type=notify`) when the service is ready, reloading or stopping.
///
/// The protocol is one datagram of `KEY=value` lines sent to the Unix socket named by `NOTIFY_SOCKET`
/// (a leading `@` names an abstract socket), so no libsystemd is needed. Without `NOTIFY_SOCKET` every
/// call does nothing.
struct ServiceManagerNotifier: Sendable {
    /// The socket address from `NOTIFY_SOCKET`; nil when not started by a service manager.
    let socketPath: String?

    /// Reads `NOTIFY_SOCKET` and removes it from the environment, so that processes started later do not
    /// speak for this one.
    init() {
        let value = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"] ?? ""
        socketPath = value.isEmpty ? nil : value
        unsetenv("NOTIFY_SOCKET")
    }

    var isActive: Bool { socketPath != nil }

    /// Sends `state` (e.g. "READY=1\nSTATUS=serving"); false when it could not be delivered.
    @discardableResult
    func send(_ state: String) -> Bool {
        guard let socketPath else { return false }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                message.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sockaddrPointer, length) }
            }
        }
        return sent == message.count
    }
}
