import CMicroHTTPD
import Foundation
import Locking

/// Per-request state that libmicrohttpd keeps for us in `con_cls` between calls of the access handler.
final class RequestContext: @unchecked Sendable {
    // Touched only from the connection's MHD thread (the access handler runs there).
    /// The request target (path and query) exactly as received.
    let target: String
    /// The connection this request arrives on, for the receive deadline.
    let tracked: ConnectionTracker.Connection?
    /// The request without its body, once the headers have passed the edge checks.
    var head: HTTPRequest?
    /// The answer for a refused request without a body, given at the final call so the connection stays open.
    var refusal: HTTPResponse?
    var body = Data()
    var bodyTooLarge = false
    var dispatched = false
    var answered = false

    let connection: OpaquePointer
    let started = ContinuousClock.now
    /// The answer, set exactly once by whichever finishes first: the handler, its deadline, or shutdown.
    private let outcome = Lock<HTTPResponse?>(nil)

    init(connection: OpaquePointer, target: String, tracked: ConnectionTracker.Connection?) {
        self.connection = connection
        self.target = target
        self.tracked = tracked
    }

    /// Stores the response and resumes the suspended connection; false when an answer was already given.
    @discardableResult
    func finish(_ response: HTTPResponse) -> Bool {
        let first = outcome.withLock { current -> Bool in
            guard current == nil else { return false }
            current = response
            return true
        }
        if first { MHD_resume_connection(connection) }
        return first
    }

    /// The stored response, once the connection has been resumed.
    var response: HTTPResponse? { outcome.withLock { $0 } }
}
