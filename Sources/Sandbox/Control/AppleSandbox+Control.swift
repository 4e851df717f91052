public import DeviceCheckModel
import FoundationEssentials
import TwoBitsCrypto
import WireFormats

extension AppleSandbox {
    /// Creates a simulated device and returns its id.
    @discardableResult
    public func createDevice() -> String {
        let id = Self.newDeviceID()
        state.withLock { $0.devices[id] = SimulatedDevice(id: id) }
        return id
    }

    /// Mints a fresh opaque device token for a device: 2,500-3,500 base64 characters, never the same twice.
    /// nil when the device does not exist.
    public func mintToken(for deviceID: String, environment: AppleEnvironment? = nil) -> String? {
        let token = Self.freshTokenText()
        let env = environment ?? configuration.environment
        return state.withLock { s in
            guard s.devices[deviceID] != nil else { return nil }
            s.tokens[token] = (deviceID, env)
            return token
        }
    }

    /// Creates a device and mints one fresh token for it (a first install).
    public func mintTokenForNewDevice(environment: AppleEnvironment? = nil) -> String {
        let id = Self.newDeviceID()
        let token = Self.freshTokenText()
        let env = environment ?? configuration.environment
        state.withLock { s in
            s.devices[id] = SimulatedDevice(id: id)
            s.tokens[token] = (id, env)
        }
        return token
    }

    /// `dev_` and 16 hex digits.
    private static func newDeviceID() -> String { "dev_" + SecureRandom.bytes(8).hexString }

    /// 1,875-2,625 random bytes in base64: 2,500-3,500 characters, as long as Apple's.
    private static func freshTokenText() -> String {
        SecureRandom.bytes(Int.random(in: 625...875) * 3).base64EncodedString()
    }

    /// A device's current state, or nil when unknown.
    public func device(_ id: String) -> SimulatedDevice? { state.withLock { $0.devices[id] } }

    /// How many devices the sandbox holds.
    public var deviceCount: Int { state.withLock { $0.devices.count } }

    /// The device a token was minted for.
    public func deviceID(forToken token: String) -> String? { state.withLock { $0.tokens[token]?.device } }

    /// Sets a device's bits and month directly (nil month: never set). False when the device is unknown.
    @discardableResult
    public func seed(_ id: String, bits: Bits, lastUpdated: YearMonth?) -> Bool {
        state.withLock { s in
            guard s.devices[id] != nil else { return false }
            s.devices[id]!.bits = bits
            s.devices[id]!.lastUpdated = lastUpdated
            return true
        }
    }

    /// Queues a fault for the next `fault.count` matching calls.
    public func inject(_ fault: Fault) { state.withLock { $0.faults.append(fault) } }

    /// Removes all queued faults.
    public func clearFaults() { state.withLock { $0.faults.removeAll() } }

    /// Delay added to every answer of Apple's endpoints.
    public var latencyMilliseconds: Int {
        get { state.withLock { $0.latencyMilliseconds } }
        set { state.withLock { $0.latencyMilliseconds = max(0, newValue) } }
    }

    public func setLatency(milliseconds: Int) { state.withLock { $0.latencyMilliseconds = max(0, milliseconds) } }

    public var counters: SandboxCounters { state.withLock { $0.counters } }

    /// Up to `limit` accepted updates with a sequence above `after`, oldest first; the oldest sequence still
    /// kept (older ones were dropped, the log keeps the last `WriteLog.capacity`); and how many there were in all.
    public func writes(after: Int = 0, limit: Int = 1_000) -> (writes: [SandboxWrite], oldest: Int, total: Int) {
        state.withLock { ($0.writes.page(after: after, limit: limit), $0.writes.oldest, $0.writes.total) }
    }

    /// Zeroes the counters (devices and tokens are kept).
    public func resetCounters() {
        state.withLock { s in
            s.counters = SandboxCounters()
            s.developerTokenDigests.removeAll()
        }
    }
}
