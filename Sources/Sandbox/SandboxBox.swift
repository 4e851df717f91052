/// Breaks the init-time cycle between the server's handler and the sandbox that owns the server.
final class SandboxBox: @unchecked Sendable {
    weak var sandbox: AppleSandbox?
}
