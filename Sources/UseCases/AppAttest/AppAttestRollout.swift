public import FoundationEssentials
import TwoBitsCrypto

/// `app_attest.rollout`: the share of installs asked to attest, fixed or rising linearly between two times.
///
/// Each install falls in one of 10,000 buckets by a hash of its id, and is in when its bucket is below
/// the share in hundredths of a percent. The share only rises (a ramp must not fall), so an install that
/// is in stays in. Pure arithmetic over the time it is given.
public struct AppAttestRollout: Sendable, Equatable {
    /// Hundredths of a percent at `from` (and before it).
    public let fromBasisPoints: Int
    /// Hundredths of a percent at `to` (and after it); at least `fromBasisPoints`.
    public let toBasisPoints: Int
    /// Nil for a fixed share.
    public let from: Date?
    public let to: Date?

    /// Buckets an install id falls in: 0..<10,000, a hundredth of a percent each.
    public static let buckets: UInt64 = 10_000
    /// Keeps this hash apart from every other SHA-256 of an install id (a bucket must not be guessable from another use).
    static let domain = "twobits.app-attest.rollout.v1\u{0}"

    /// A fixed share, in hundredths of a percent (0...10,000).
    public init(basisPoints: Int) {
        fromBasisPoints = basisPoints
        toBasisPoints = basisPoints
        from = nil
        to = nil
    }

    /// A linear ramp from `fromBasisPoints` at `from` to `toBasisPoints` at `to` (`from` < `to`, the share not falling).
    public init(from: Date, to: Date, fromBasisPoints: Int, toBasisPoints: Int) {
        self.from = from
        self.to = to
        self.fromBasisPoints = fromBasisPoints
        self.toBasisPoints = toBasisPoints
    }

    /// The share at `now`, in hundredths of a percent, rounded down.
    public func basisPoints(at now: Date) -> Int {
        guard let from, let to else { return fromBasisPoints }
        if now <= from { return fromBasisPoints }
        if now >= to { return toBasisPoints }
        let elapsed = now.timeIntervalSince(from) / to.timeIntervalSince(from)
        return fromBasisPoints + Int((Double(toBasisPoints - fromBasisPoints) * elapsed).rounded(.down))
    }

    /// The install's bucket: the first 8 bytes of SHA-256(domain + install id), big-endian, mod 10,000.
    public static func bucket(installID: String) -> Int {
        let digest = SHA256Digest.hash(Data((domain + installID).utf8))
        let leading = digest.prefix(8).reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
        return Int(leading % buckets)
    }

    /// Whether the install is asked to attest at `now`. Without an id: only when every install is.
    public func includes(installID: String?, at now: Date) -> Bool {
        let share = basisPoints(at: now)
        guard let installID else { return share >= Int(Self.buckets) }
        return Self.bucket(installID: installID) < share
    }
}
