#if canImport(Security) && (os(iOS) || os(macOS))
import Foundation
import Security

/// The install's App Attest key in the Keychain, readable after the first unlock and on this device only: a
/// restore onto another device does not carry it, as App Attest keys do not move either.
public struct KeychainKeyStore: KeyStore {
    public let service: String
    public let account: String

    public init(service: String = "TwoBitsClient", account: String = "app-attest-key") {
        self.service = service
        self.account = account
    }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    public func load() async -> AttestedKey? {
        var search = query
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        guard SecItemCopyMatching(search as CFDictionary, &item) == errSecSuccess, let data = item as? Data else { return nil }
        return try? JSONDecoder().decode(AttestedKey.self, from: data)
    }

    public func save(_ key: AttestedKey) async {
        guard let data = try? JSONEncoder().encode(key) else { return }
        SecItemDelete(query as CFDictionary)
        var item = query
        item[kSecValueData as String] = data
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        SecItemAdd(item as CFDictionary, nil)
    }

    public func remove() async {
        SecItemDelete(query as CFDictionary)
    }
}
#endif
