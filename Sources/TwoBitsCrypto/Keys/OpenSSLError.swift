import COpenSSL

/// The text of OpenSSL's most recent error, clearing the queue.
func drainOpenSSLErrors() -> String {
    var last = ""
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buf = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buf, buf.count)
        last = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    return last.isEmpty ? "unknown OpenSSL error" : last
}
