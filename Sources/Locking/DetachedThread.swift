import CEventLoop
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts a named OS thread that runs a closure and ends with it, for the few long-lived workers outside
/// the event loops (WAL checkpoints, the log flusher, PostgreSQL's pool). Foundation's `Thread` would bring
/// full Foundation, and with it ICU, into the binary (docs/architecture.md, "One binary").
public enum DetachedThread {
    /// `name` shows in `top -H` and debuggers (the kernel keeps its first 15 bytes).
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Work(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, { raw in
            let work = Unmanaged<Work>.fromOpaque(raw!).takeRetainedValue()
            twobits_name_current_thread(work.name)
            work.body()
            return nil
        }, context)
        precondition(rc == 0, "pthread_create failed (\(rc))")
    }

    private final class Work {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
