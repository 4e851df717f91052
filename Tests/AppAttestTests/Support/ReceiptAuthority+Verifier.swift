import AppAttest
import Sandbox

extension ReceiptAuthority {
    /// The verifier under test, trusting this authority's root alone (TestSupport has the same for the other suites;
    /// this target does not depend on it).
    var verifier: ReceiptVerifier { ReceiptVerifier(chainVerifier: chainVerifier) }
}
