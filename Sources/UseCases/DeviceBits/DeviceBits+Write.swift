import DeviceCheckModel
import FoundationEssentials
import Ledger
public import Policy
import TwoBitsCrypto

extension DeviceBits {
    /// Writes both bits to Apple, audited from before the call to its real outcome (`WritePlan`); returns Apple's
    /// transaction id.
    ///
    /// 1. The intent (audit event `pending`, plus what is needed to settle it) is recorded durably. If it
    ///    cannot be, nothing is sent to Apple: `.storage`.
    /// 2. Apple's update. Success resolves the event to `audit.result` (`ok`, `banned`); a failure Apple
    ///    answered resolves it `failed`; an outcome not known (timeout, lost connection, ambiguous answer)
    ///    resolves it `unknown`, settled later by a query (`queryBeforeWrite`, `reconcileInterruptedWrites`).
    ///
    /// The update is the only step that cannot be undone: it never starts for a request whose task was
    /// cancelled (answered by its deadline, or by shutdown), checked before the intent and again right
    /// before the call.
    @discardableResult
    func write(_ token: DeviceToken, bits: Bits, before: DeviceMeaning, audit: AuditEvent) async throws(PolicyError) -> String {
        if Task.isCancelled { throw .cancelled }
        let month = currentMonth
        let at = now()
        // Time-ordered ids: the intents written together share the index pages of the ledger's keys.
        let id = SecureRandom.uuidV7(milliseconds: UInt64(max(0, at.timeIntervalSince1970 * 1000)))
        let plan = WritePlan(id: id, token: token, bits: bits, before: before, month: month, at: at, audit: audit)
        do { try await ledger.recordWriteIntent(plan.intent) } catch { throw .storage(error) }
        if Task.isCancelled {
            await resolve(plan.cancelled())
            throw .cancelled
        }

        let transactionID: String
        do { transactionID = try await apple.update(token, bits: plan.bits) } catch {
            await resolve(plan.failed(error))
            throw .apple(error)
        }
        // Apple has written. Should the ledger fail right now, the resolution is kept and saved by the
        // service's retry; should the process die first, the event stays `pending` with the token kept, and the
        // reconciliation at the next start settles it by a query.
        await resolve(plan.written(transactionID: transactionID))
        return transactionID
    }

    /// Saves an intent's resolution, or keeps it for a retry when the ledger fails.
    func resolve(_ resolution: WriteResolution) async {
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

    /// At start-up, before serving: the writes an earlier process left `pending` (it stopped between
    /// recording the intent and Apple's answer) become `unknown`, to be settled by the next request with
    /// the same device token (`queryBeforeWrite`). Returns how many.
    public func reconcileInterruptedWrites() async throws(PolicyError) -> Int {
        do {
            return try await ledger.markInterruptedWriteIntents(reason: "the process stopped before Apple answered")
        } catch { throw .storage(error) }
    }
}
