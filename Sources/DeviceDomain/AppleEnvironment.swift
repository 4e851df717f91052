/// Apple's two environments. DeviceCheck's hosts keep separate bit state, and App Attest's keys are of one or
/// the other (the AAGUID says which); Xcode builds produce development tokens and keys. The raw values are the
/// names the configuration, the ledger (`app_attest_keys.environment`) and the admin API use, spelled only here.
public enum AppleEnvironment: String, Sendable, Codable, CaseIterable {
    case production
    case development
}
