import CCurl
import Locking

/// A curl header list (`CURLOPT_HTTPHEADER`), shared by the transfers that send the same headers.
///
/// Every Apple call sends the same headers until the developer token is renewed (once per period), so
/// the list is built once, not for every call (a string and two curl allocations per header, each
/// freed after the call). curl only reads the list, while a transfer using it runs; each transfer holds
/// the list it was given, so a list replaced in the cache lives until its last transfer is done.
// Unchecked: immutable after init (a C list curl only reads), freed when the last transfer holding it is gone.
final class CurlHeaderList: @unchecked Sendable {
    let headers: [(String, String)]
    let list: UnsafeMutablePointer<curl_slist>?

    private init(_ headers: [(String, String)]) {
        self.headers = headers
        // Without "Expect:" curl sends "Expect: 100-continue" for bodies over 1 KiB and waits a round trip.
        var list = curl_slist_append(nil, "Expect:")
        for (name, value) in headers { list = curl_slist_append(list, "\(name): \(value)") }
        self.list = list
    }

    deinit { curl_slist_free_all(list) }

    private func sends(_ other: [(String, String)]) -> Bool {
        headers.count == other.count && zip(headers, other).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    /// The list last built.
    private static let last = Lock<CurlHeaderList?>(nil)

    /// The list for `headers`: the last one built when it sends the same headers, otherwise a new one,
    /// which replaces it.
    static func list(for headers: [(String, String)]) -> CurlHeaderList {
        if let last = last.withLock({ $0 }), last.sends(headers) { return last }
        let made = CurlHeaderList(headers)
        last.withLock { $0 = made }
        return made
    }
}
