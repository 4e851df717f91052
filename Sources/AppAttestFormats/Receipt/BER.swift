package import FoundationEssentials

/// Just enough ASN.1 encoding for the sandbox's receipts: definite-length TLVs, BER indefinite-length
/// constructed elements (as Apple encodes its receipts), and the few object identifiers a receipt names. The
/// sandbox signs its receipts with it; `ReceiptPayloadFields` encodes a payload with it.
package enum BER {
    /// A TLV with a definite, minimally encoded length.
    package static func definite(_ tag: UInt8, _ contents: Data) -> Data {
        var out = Data([tag])
        let count = contents.count
        if count < 0x80 {
            out.append(UInt8(count))
        } else {
            var lengthBytes: [UInt8] = []
            var rest = count
            while rest > 0 { lengthBytes.insert(UInt8(rest & 0xFF), at: 0); rest >>= 8 }
            out.append(0x80 | UInt8(lengthBytes.count))
            out.append(contentsOf: lengthBytes)
        }
        out.append(contents)
        return out
    }

    /// A constructed element with an indefinite length: `tag`, 0x80, the parts, end-of-contents.
    package static func indefinite(_ tag: UInt8, _ parts: [Data]) -> Data {
        var out = Data([tag, 0x80])
        for part in parts { out.append(part) }
        out.append(contentsOf: [0, 0])
        return out
    }

    package static func integer(_ value: Int) -> Data {
        precondition(value >= 0 && value < 0x80, "small integers only")
        return definite(0x02, Data([UInt8(value)]))
    }

    package static func octetString(_ bytes: Data) -> Data { definite(0x04, bytes) }
    package static func sequence(_ parts: Data...) -> Data { definite(0x30, parts.reduce(Data(), +)) }
    package static func set(_ parts: [Data]) -> Data { definite(0x31, parts.reduce(Data(), +)) }

    /// Object identifiers, encoded (tag, length, value).
    package static let signedDataOID = Data([0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02])
    package static let dataOID = Data([0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01])
    package static let sha256OID = Data([0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01])
    package static let ecdsaWithSHA256OID = Data([0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02])
    package static let contentTypeOID = Data([0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x03])
    package static let messageDigestOID = Data([0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x04])
}
