import CCurl
import CCurlShims
import FoundationEssentials

/// One libcurl easy handle and everything that must live as long as it does.
///
/// Made on the caller's thread; from `CurlMulti.add` on, touched only on the multi's loop thread.
// Unchecked: made on the caller's thread and handed over once; from `CurlMulti.add` on only its loop's thread touches it.
final class CurlTransfer: @unchecked Sendable {
    /// The TLS 1.2 cipher suites offered to Apple (and to a proxy re-signing its TLS): ECDHE with AES-GCM or
    /// ChaCha20-Poly1305, the suites Apple's hosts negotiate.
    static let tls12Ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
        + "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

    let easy: UnsafeMutableRawPointer
    /// Held while curl may read it.
    private var headerList: CurlHeaderList?
    /// curl's own words for a failure (CURLOPT_ERRORBUFFER): which certificate check failed, where
    /// `curl_easy_strerror` only names the class. Written by curl until the handle is reset.
    private let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    let https: Bool
    /// `scheme://host:port` of the URL: the connections this call may share (HostStreams).
    let origin: String
    /// The whole transfer's timeout as asked; a call that waited for a stream gets what is left of it.
    let timeoutMilliseconds: Int
    /// When the call began to wait for a stream (HostStreams); nil once it went to curl.
    var waitingSince: ContinuousClock.Instant?
    /// Told how many connections curl opened for this call (CURLINFO_NUM_CONNECTS), when it opened any.
    var connectionsOpened: (@Sendable (_ origin: String, _ count: Int) -> Void)?
    var received = Data()
    /// Where curl's verbose text leaves the TLS version, for a request that describes its link.
    private var tlsText: UnsafeMutablePointer<twobits_tls_text>?
    /// Set once, before the transfer is handed to its loop.
    var completion: (@Sendable (Result<OutboundResponse, OutboundError>) -> Void)?
    /// The multi running the transfer, while it runs.
    private weak var multi: CurlMulti?
    /// The multi the transfer was given to, while it waits or runs (curl's callbacks reach it through the transfer).
    var attachedMulti: CurlMulti? { multi }
    /// The caller was cancelled before the transfer reached curl.
    private(set) var cancelled = false
    private var finished = false

    /// - Parameter caFile: the PEM bundle of trust anchors for `https://`, in place of the operating system's
    ///   store; nil: the system's (libcurl's default bundle and directory).
    init?(request: OutboundRequest, caFile: String? = nil) {
        guard let easy = EasyHandlePool.shared.take() else { return nil }
        self.easy = easy
        https = request.url.hasPrefix("https://")
        origin = Self.origin(of: request.url)
        timeoutMilliseconds = max(1, request.timeoutMilliseconds)
        errorText[0] = 0
        twobits_easy_setopt_str(easy, CURLOPT_URL, request.url)
        twobits_easy_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorText)
        twobits_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        twobits_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, max(1, request.timeoutMilliseconds))
        twobits_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, min(request.timeoutMilliseconds, 5_000)))
        // Over TLS, prefer waiting for a multiplexed HTTP/2 stream to opening another connection.
        // Plain HTTP is HTTP/1.1 only: waiting would queue a cold burst behind the first answer.
        if https {
            twobits_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1)
            // Apple offers TLS 1.2 and 1.3; an older version is a path that is not Apple's, whatever openssl.cnf allows.
            twobits_easy_setopt_long(easy, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
            // TLS 1.2 suites as Apple offers them: forward-secret AEAD only. OpenSSL's default would also take
            // CBC with SHA-1 or static RSA from a path that is not Apple's. TLS 1.3's suites are all AEAD.
            twobits_easy_setopt_str(easy, CURLOPT_SSL_CIPHER_LIST, Self.tls12Ciphers)
        }
        if https, let caFile {
            // Replaces the store: Debian's libcurl also reads /etc/ssl/certs as a directory unless CAPATH is unset.
            twobits_easy_setopt_str(easy, CURLOPT_CAINFO, caFile)
            twobits_easy_setopt_ptr(easy, CURLOPT_CAPATH, nil)
        }
        twobits_easy_setopt_long(easy, CURLOPT_TCP_NODELAY, 1)
        // Apple's answers are a few bytes: curl's smallest receive buffer (1 KiB) keeps thousands of calls
        // in flight cheap, and curl allocates it per transfer, where glibc's per-thread cache serves
        // 1 KiB but not 4 KiB (a larger block also makes glibc consolidate its free lists first).
        twobits_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, 1_024)
        twobits_easy_setopt_long(easy, CURLOPT_UPLOAD_BUFFERSIZE, 16_384)
        switch request.method {
        case "GET": twobits_easy_setopt_long(easy, CURLOPT_HTTPGET, 1)
        case "POST": twobits_easy_setopt_long(easy, CURLOPT_POST, 1)
        default: twobits_easy_setopt_str(easy, CURLOPT_CUSTOMREQUEST, request.method)
        }
        // A POST without a body is sent with an empty one: curl would otherwise read the body from stdin and
        // frame it chunked, which servers that take Content-Length only (TwoBits' own edge) refuse with 411.
        if let body = request.body ?? (request.method == "POST" ? Data() : nil) {
            // curl copies the bytes now, so the Data need not outlive this call.
            twobits_easy_setopt_long(easy, CURLOPT_POSTFIELDSIZE, body.count)
            if body.isEmpty {
                twobits_easy_setopt_str(easy, CURLOPT_COPYPOSTFIELDS, "")
            } else {
                body.withUnsafeBytes { raw in
                    _ = twobits_easy_setopt_ptr(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress!))
                }
            }
        }
        let headers = CurlHeaderList.list(for: request.headers)
        headerList = headers
        twobits_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headers.list)
        twobits_easy_setopt_write(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback)
        if request.describesLink {
            let text = UnsafeMutablePointer<twobits_tls_text>.allocate(capacity: 1)
            twobits_easy_capture_tls(easy, text)
            tlsText = text
        }
    }

    /// Hands the transfer's address to the write callback. Unretained: the multi's in-flight table
    /// owns the transfer until curl is done with the handle.
    func attach(to multi: CurlMulti) {
        self.multi = multi
        twobits_easy_setopt_ptr(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The caller gave up (its task was cancelled): take the transfer out of curl now, or never start it.
    /// On the multi's loop thread.
    func cancel() {
        if let multi { multi.remove(self) } else { cancelled = true }
    }

    deinit {
        errorText.deallocate()
        tlsText?.deallocate()
    }

    /// The link of a finished transfer, for a request that describes it: (TLS, HTTP version).
    private var link: (tls: String?, httpVersion: String?) {
        guard let tlsText else { return (nil, nil) }
        let tls = withUnsafeBytes(of: &tlsText.pointee.text) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let version: String? = switch twobits_easy_info_long(easy, CURLINFO_HTTP_VERSION) {
        case Int(CURL_HTTP_VERSION_1_0): "HTTP/1.0"
        case Int(CURL_HTTP_VERSION_1_1): "HTTP/1.1"
        case Int(CURL_HTTP_VERSION_2_0): "HTTP/2"
        case Int(CURL_HTTP_VERSION_3): "HTTP/3"
        default: nil
        }
        return (tls.isEmpty ? nil : tls, version)
    }

    /// `scheme://authority` of `url`, lower-cased (what curl's connection cache keys connections by, near enough).
    /// Only the origin is lower-cased, and only when it has upper-case letters: every call computes this.
    static func origin(of url: String) -> String {
        let bytes = url.utf8
        let schemeLength = hasASCIIPrefix(bytes, "https://") ? 8 : hasASCIIPrefix(bytes, "http://") ? 7 : 0
        let rest = bytes.dropFirst(schemeLength)
        let end = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
        // Configured URLs are lower-case ASCII: then there is nothing to fold.
        let folded = bytes[..<end].contains { $0 >= 0x80 || ($0 >= 0x41 && $0 <= 0x5A) }
        return folded ? url[..<end].lowercased() : String(url[..<end])
    }

    /// Whether `bytes` begin with `prefix` (lower-case ASCII), ignoring ASCII case.
    private static func hasASCIIPrefix(_ bytes: String.UTF8View, _ prefix: StaticString) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        return zip(bytes, expected).allSatisfy { (byte: UInt8, lower: UInt8) -> Bool in
            let folded: UInt8 = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            return folded == lower
        }
    }

    /// Whether a call waiting for a stream still has time left (one not waiting always has).
    func hasTimeLeft(now: ContinuousClock.Instant) -> Bool {
        guard let since = waitingSince else { return true }
        return now < since + .milliseconds(timeoutMilliseconds)
    }

    /// Sets what is left of the timeout after a wait for a stream; false when too little is left for an exchange
    /// (a quarter of the timeout, 250 ms at most): it would time out with its request maybe sent, where failing
    /// now says for sure that nothing was.
    func shortenTimeout(now: ContinuousClock.Instant) -> Bool {
        guard let since = waitingSince else { return true }
        waitingSince = nil
        let waited = now - since
        let left = timeoutMilliseconds - Int(waited.components.seconds * 1000 + waited.components.attoseconds / 1_000_000_000_000_000)
        guard left >= max(1, min(250, timeoutMilliseconds / 4)) else { return false }
        twobits_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, left)
        return true
    }

    /// Whether the answer came over HTTP/1.x (one call per connection).
    var answeredOverHTTP1: Bool {
        let version = twobits_easy_info_long(easy, CURLINFO_HTTP_VERSION)
        return version == Int(CURL_HTTP_VERSION_1_0) || version == Int(CURL_HTTP_VERSION_1_1)
    }

    func finish(_ code: CURLcode) {
        let opened = twobits_easy_info_long(easy, CURLINFO_NUM_CONNECTS)
        if opened > 0 { connectionsOpened?(origin, opened) }
        switch code {
        case CURLE_OK:
            let link = self.link
            finish(.success(OutboundResponse(status: twobits_easy_response_code(easy), body: received, tls: link.tls, httpVersion: link.httpVersion)))
        case CURLE_OPERATION_TIMEDOUT:
            // A connection of this transfer's own, TCP connected (curl 7.88 knows the local port only then; its
            // connect time waits for TLS too), whose handshake never finished: a path that swallows TLS, not a
            // slow Apple, and the request was never sent. A call on a reused or shared connection stays a timeout
            // (maybe sent: an update's outcome is unknown).
            let stalled = https && twobits_easy_info_long(easy, CURLINFO_NUM_CONNECTS) > 0
                && twobits_easy_info_long(easy, CURLINFO_LOCAL_PORT) != 0
                && twobits_easy_info_off(easy, CURLINFO_APPCONNECT_TIME_T) == 0
            finish(.failure(stalled ? .tlsFailed(Self.handshakeStalled) : .timedOut))
        default:
            if Self.isTLSFailure(code) {
                let text = errorText[0] != 0 ? String(cString: errorText) : String(cString: curl_easy_strerror(code))
                finish(.failure(.tlsFailed(text)))
            } else {
                finish(.failure(.connectionFailed(String(cString: curl_easy_strerror(code)))))
            }
        }
    }

    /// The reason of a handshake that got no answer within the transfer's connect timeout.
    static let handshakeStalled = "the TLS handshake did not finish in time"

    /// curl's codes for a TLS handshake that failed before the request was sent: a certificate or host name
    /// refused, no protocol or cipher in common, trust anchors that cannot be read.
    static func isTLSFailure(_ code: CURLcode) -> Bool {
        switch code {
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED,
             CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED:
            return true
        default:
            return false
        }
    }

    func finish(_ result: Result<OutboundResponse, OutboundError>) {
        guard !finished else { return }
        finished = true
        multi = nil
        EasyHandlePool.shared.give(easy)
        headerList = nil
        completion?(result)
        completion = nil
    }
}

private let curlWriteCallback: twobits_curl_write_fn = { ptr, size, count, userdata in
    let n = size * count
    guard let ptr, let userdata else { return n }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    // A response over 1 MiB is not from DeviceCheck; abort the transfer.
    if transfer.received.count + n > 1 << 20 { return 0 }
    transfer.received.append(UnsafeRawPointer(ptr).assumingMemoryBound(to: UInt8.self), count: n)
    return n
}
