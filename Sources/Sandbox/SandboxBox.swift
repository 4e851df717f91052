import Locking

/// Breaks the init-time cycle between the server's handler and the sandbox that owns the server.
final class SandboxBox: Sendable {
    private struct Reference: Sendable { weak var sandbox: AppleSandbox? }
    /// Set once, before the server starts; read by every request.
    private let reference = Lock(Reference())

    var sandbox: AppleSandbox? {
        get { reference.withLock { $0.sandbox } }
        set { reference.withLock { $0.sandbox = newValue } }
    }
}
