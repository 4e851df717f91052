import DeviceCheckModel
import FoundationEssentials
import Locking
import TwoBitsCrypto

/// Everything the sandbox remembers, behind one lock.
final class SandboxState: Sendable {
    struct Storage {
        var devices: [String: SimulatedDevice] = [:]
        /// device token text → (device id, environment it was minted for)
        var tokens: [String: (device: String, environment: AppleEnvironment)] = [:]
        var faults: [Fault] = []
        var counters = SandboxCounters()
        /// Every update accepted, in order (bounded: the last `WriteLog.capacity`).
        var writes = WriteLog()
        var developerTokenDigests: Set<String> = []
        var latencyMilliseconds = 0
        var callsInFlight = 0
        /// App Attest keys of simulated devices, by key id (standard base64, as `generateKey` returns it).
        var appAttestKeys: [String: SimulatedAppAttestKey] = [:]
        /// Added to the sandbox's clock for App Attest's fraud service (receipt times, their 30-day windows).
        var appAttestClockOffset: TimeInterval = 0
        /// Between a refreshed receipt's creation and its Not Before (Apple: 24 h).
        var receiptRefreshInterval: TimeInterval = SimulatedAppAttestKey.refreshInterval
    }

    let storage: Lock<Storage>

    init(latencyMilliseconds: Int) {
        var s = Storage()
        s.latencyMilliseconds = latencyMilliseconds
        storage = Lock(s)
    }

    func withLock<T>(_ body: (inout Storage) -> T) -> T { storage.withLock { body(&$0) } }

    /// Takes the next fault that applies to `endpoint`, consuming one of its count.
    func nextFault(for endpoint: String) -> Fault? {
        withLock { s in
            guard let index = s.faults.firstIndex(where: { $0.endpoint == nil || $0.endpoint == endpoint }) else { return nil }
            let fault = s.faults[index]
            s.faults[index].count -= 1
            if s.faults[index].count <= 0 { s.faults.remove(at: index) }
            return fault
        }
    }
}
