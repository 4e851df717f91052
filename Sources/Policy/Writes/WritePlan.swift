public import DeviceCheckModel
public import FoundationEssentials
public import Ledger

/// One write of both bits to Apple, audited from before the call to its real outcome: the intent to record
/// first (audit event `pending`, plus what is needed to settle it), and the resolution of each outcome. Every
/// write (claims, bans, unbans, pending orders, installs) is planned here and carried out by the use case
/// that owns Apple's client and the stores (intent → update → resolution).
public struct WritePlan: Sendable, Equatable {
    /// The intent to record before Apple's update; its event is the audit event as it stands (`pending`).
    public let intent: WriteIntent
    /// The bits to send, and the month Apple stamps on them.
    public let bits: Bits
    public let month: YearMonth
    /// The reason the audit event was planned with (failures append theirs).
    let reason: String?

    /// The write of `bits` to `token`'s device, read as `before`, at `at` (in `month`); `audit` names the
    /// action, its subject, its reason and its result on success (`ok`, `banned`). `id` is the intent's id.
    public init(id: String, token: DeviceToken, bits: Bits, before: DeviceMeaning, month: YearMonth, at: Date, audit: AuditEvent) {
        var event = audit
        event.at = at
        event.bitsBefore = Self.snapshot(before)
        event.bitsAfter = .state(BitState(bits: bits, lastUpdated: month))
        event.tokenPrefix = token.shortDigest
        event.result = .pending
        intent = WriteIntent(id: id, tokenPrefix: token.shortDigest, bits: bits, month: month, successResult: audit.result, event: event)
        self.bits = bits
        self.month = month
        reason = audit.reason
    }

    /// Apple wrote: the event takes its result on success.
    public func written(transactionID: String) -> WriteResolution {
        WriteResolution(id: intent.id, result: intent.successResult, bitsAfter: intent.event.bitsAfter, reason: reason, transactionID: transactionID)
    }

    /// Apple's update failed: `failed` when Apple answered, `unknown` (the intended bits kept, settled by a later
    /// query) when the outcome is not known (timeout, lost connection, ambiguous answer).
    public func failed(_ error: DeviceCheckError) -> WriteResolution {
        let result: AuditResult = Self.isOutcomeUnknown(error) ? .unknown : .failed
        return WriteResolution(id: intent.id, result: result, bitsAfter: result == .unknown ? intent.event.bitsAfter : nil,
                               reason: Self.joined(reason, error.description), transactionID: nil)
    }

    /// The request was answered before the update was sent: nothing was written.
    public func cancelled() -> WriteResolution {
        WriteResolution(id: intent.id, result: .failed, bitsAfter: nil, reason: Self.joined(reason, "cancelled before the update was sent"),
                        transactionID: nil)
    }

    static func isOutcomeUnknown(_ error: DeviceCheckError) -> Bool {
        if case .unavailable(.outcomeUnknown) = error { return true }
        return false
    }

    static func joined(_ parts: String?...) -> String? {
        let present = parts.compactMap { $0 }
        return present.isEmpty ? nil : present.joined(separator: "; ")
    }

    /// The device as read, the audit event's `bits_before` (stored `(b0,b1)@YYYY-MM`, `… (stale)` or `never-set`).
    static func snapshot(_ meaning: DeviceMeaning) -> BitsSnapshot {
        guard let raw = meaning.raw else { return .neverSet }
        return .state(raw, stale: meaning.stale)
    }
}
