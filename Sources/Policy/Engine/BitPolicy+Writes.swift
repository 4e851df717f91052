import DeviceCheckModel
import FoundationEssentials
import Ledger
import Mechanisms
import TwoBitsCrypto

extension BitPolicy {
    /// Writes both bits to Apple, audited from before the call to its real outcome; returns Apple's
    /// transaction id. Every write path (claims, bans, unbans, pending orders, installs) goes through here.
    ///
    /// 1. The intent (audit event `pending`, plus what is needed to settle it) is recorded durably. If it
    ///    cannot be, nothing is sent to Apple: `.storage`.
    /// 2. Apple's update. Success resolves the event to `audit.result` (`ok`, `banned`); a failure Apple
    ///    answered resolves it `failed`; an outcome not known (timeout, lost connection, ambiguous answer)
    ///    resolves it `unknown`, settled later by a query (`settleEarlierWrites`, `reconcileWriteIntents`).
    ///
    /// The update is the only step that cannot be undone: it never starts for a request whose task was
    /// cancelled (answered by its deadline, or by shutdown), checked before the intent and again right
    /// before the call.
    @discardableResult
    func write(_ token: DeviceToken, bits: Bits, before: DeviceMeaning, audit: AuditEvent) async throws(PolicyError) -> String {
        if Task.isCancelled { throw .cancelled }
        let month = currentMonth
        var event = audit
        event.at = now()
        event.bitsBefore = Self.describe(before)
        event.bitsAfter = "\(bits)@\(month)"
        event.tokenPrefix = token.shortDigest
        event.result = .pending
        // Time-ordered ids: the intents written together share the index pages of the ledger's keys.
        let id = SecureRandom.uuidV7(milliseconds: UInt64(max(0, event.at.timeIntervalSince1970 * 1000)))
        let intent = WriteIntent(id: id, tokenPrefix: token.shortDigest, bits: bits, month: month,
                                 successResult: audit.result, event: event)
        do { try await ledger.recordWriteIntent(intent) } catch { throw .storage(error) }
        if Task.isCancelled {
            await resolve(intent.id, result: .failed, bitsAfter: nil, reason: Self.joined(audit.reason, "cancelled before the update was sent"),
                          transactionID: nil)
            throw .cancelled
        }

        let transactionID: String
        do { transactionID = try await apple.update(token, bits: bits) } catch {
            let result: AuditResult = Self.isOutcomeUnknown(error) ? .unknown : .failed
            await resolve(intent.id, result: result, bitsAfter: result == .unknown ? event.bitsAfter : nil,
                          reason: Self.joined(audit.reason, error.description), transactionID: nil)
            throw .apple(error)
        }
        // Apple has written. Should the ledger fail right now, the resolution is kept and saved by the
        // service's retry; should the process die first, the event stays `pending` with the token kept, and the
        // reconciliation at the next start settles it by a query.
        await resolve(intent.id, result: audit.result, bitsAfter: event.bitsAfter, reason: audit.reason, transactionID: transactionID)
        return transactionID
    }

    /// Saves an intent's resolution, or keeps it for a retry when the ledger fails (`UnsavedResolution`).
    func resolve(_ id: String, result: AuditResult, bitsAfter: String?, reason: String?, transactionID: String?) async {
        let resolution = UnsavedResolution(id: id, result: result, bitsAfter: bitsAfter, reason: reason, transactionID: transactionID)
        do { try await resolution.save(in: ledger) } catch {
            _ = unsavedResolutions.keep(resolution)
        }
    }

    /// Saves the resolutions the ledger failed to take (a lock check only, when there are none). The service
    /// calls this every second, so an event whose resolution met an outage is settled soon after the ledger
    /// is back, even when this process makes no further write.
    public func retryUnsavedResolutions() async {
        await unsavedResolutions.retry { [ledger] in try await $0.save(in: ledger) }
    }

    /// How many resolutions wait for the ledger.
    public var unsavedResolutionCount: Int { unsavedResolutions.count }

    static func isOutcomeUnknown(_ error: DeviceCheckError) -> Bool {
        if case .unavailable(.outcomeUnknown) = error { return true }
        return false
    }

    static func joined(_ parts: String?...) -> String? {
        let present = parts.compactMap { $0 }
        return present.isEmpty ? nil : present.joined(separator: "; ")
    }

    /// Queries the device before a write and, from that answer, settles the earlier writes of the same
    /// device token whose outcome is not known (`unknown`). The retry's own query settles them before the
    /// retry writes, so its own write cannot be mistaken for theirs.
    func queryBeforeWrite(_ token: DeviceToken) async throws(PolicyError) -> QueryResult {
        let result = try await query(token)
        for intent in (try? await ledger.unknownWriteIntents(tokenPrefix: token.shortDigest, limit: 20)) ?? [] {
            await settle(intent, from: result)
        }
        return result
    }

    /// Resolves `intent` from a query answer read after it: written when the device shows the intended
    /// bits stamped in the intent's month or later, otherwise not written.
    func settle(_ intent: WriteIntent, from result: QueryResult) async {
        var written = false
        if case .state(let state) = result { written = intent.isShown(by: state) }
        let verdict = written ? "the device shows the intended bits" : "the device does not show the intended bits"
        await resolve(intent.id, result: written ? intent.successResult : .failed, bitsAfter: written ? intent.event.bitsAfter : nil,
                      reason: Self.joined(intent.event.reason, "settled by a later query of the device token: \(verdict)"), transactionID: nil)
    }

    /// At start-up, before serving: the writes an earlier process left `pending` (it stopped between
    /// recording the intent and Apple's answer) become `unknown`, to be settled by the next request with
    /// the same device token (`queryBeforeWrite`). Returns how many.
    public func reconcileInterruptedWrites() async throws(PolicyError) -> Int {
        do {
            return try await ledger.markInterruptedWriteIntents(reason: "the process stopped before Apple answered")
        } catch { throw .storage(error) }
    }
}
