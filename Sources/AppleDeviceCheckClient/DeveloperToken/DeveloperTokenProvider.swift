public import FoundationEssentials
import Locking
import TwoBitsCrypto

/// Signs the developer JWT and shares one token across every request.
///
/// A token is re-signed at a random age between 30 and 50 minutes (Apple rejects an `iat` older than
/// 60 minutes and asks for no more than one new token per 20), or at once when Apple answered 401 to it.
public final class DeveloperTokenProvider: Sendable {
    public let credentials: DeveloperCredentials
    private let signer: ES256Signer
    private let now: @Sendable () -> Date
    private let refreshAge: ClosedRange<TimeInterval>
    private let state = Lock<State>(State())

    private struct State {
        var token: DeveloperToken?
        var refreshAt = Date.distantPast
        var signed = 0
    }

    public init(credentials: DeveloperCredentials, refreshAge: ClosedRange<TimeInterval> = 30 * 60...50 * 60,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.credentials = credentials
        self.signer = ES256Signer(key: credentials.key)
        self.refreshAge = refreshAge
        self.now = now
    }

    /// The shared token, signed anew only when it has reached its refresh age.
    public func current() -> DeveloperToken {
        let time = now()
        return state.withLock { s in
            if let token = s.token, time < s.refreshAt, time >= token.issuedAt.addingTimeInterval(-60) { return token }
            let token = sign(at: time)
            s.token = token
            s.refreshAt = token.issuedAt.addingTimeInterval(Double.random(in: refreshAge))
            s.signed += 1
            return token
        }
    }

    /// Drops `token` if it is still the shared one, so the next `current()` signs a new one.
    public func invalidate(_ token: DeveloperToken) {
        state.withLock { s in if s.token == token { s.token = nil } }
    }

    /// How many tokens have been signed since start (one per refresh period under any load).
    public var tokensSigned: Int { state.withLock { $0.signed } }

    /// Signs a token with `iat` at `time` (whole seconds).
    public func sign(at time: Date) -> DeveloperToken {
        let iat = Int(time.timeIntervalSince1970)
        let header = #"{"alg":"ES256","kid":"\#(credentials.keyID)"}"#
        let claims = #"{"iss":"\#(credentials.teamID)","iat":\#(iat)}"#
        let jwt = JWS.sign(headerJSON: Data(header.utf8), claimsJSON: Data(claims.utf8), signer: signer)
        return DeveloperToken(jwt: jwt, issuedAt: Date(timeIntervalSince1970: TimeInterval(iat)))
    }
}
