import AppAttest
import Sandbox

extension ReceiptAuthority {
    /// The product's receipt verifier trusting this authority's root alone (sharing its chain verifier's memory):
    /// the sandbox no longer depends on App Attest's verifiers, so the suites that check its receipts build it here.
    public var verifier: ReceiptVerifier { ReceiptVerifier(chainVerifier: chainVerifier) }
}
