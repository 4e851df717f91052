public import FoundationEssentials

/// A receipt's payload, parsed: `SET OF SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
///
/// Lenient where Apple is inconsistent: any field order, field 4 of any length, unknown types and the version
/// ignored. Strict everywhere else: DER lengths, each type at most once, every required field present, times in
/// the one format (RFC 3339 UTC), the metric decimal digits only, field 3 a certificate with a P-256 key.
public struct ReceiptPayload: Sendable, Equatable {
    /// Field 6.
    public let type: ReceiptType
    /// Field 2, "TEAMID.bundle.id".
    public let appID: String
    /// Field 7 (undocumented): "sandbox" or "production".
    public let environment: String?
    /// Field 12.
    public let creation: Date
    /// Field 19; RECEIPT only: Apple answers 304 to a refresh before it.
    public let notBefore: Date?
    /// Field 21.
    public let expiration: Date
    /// Field 17; RECEIPT only: the attested keys of the device for this app over the past 30 days.
    public let riskMetric: Int?
    /// Field 5: the same for every receipt of a key.
    public let token: String
    /// Field 4: the 32-byte client data hash in an ATTEST receipt; a mangled longer copy in a RECEIPT.
    public let clientHash: Data
    /// Field 3: the DER of the attested key's credential certificate.
    public let attestedCertificate: Data
    /// The key of field 3's certificate, 0x04 ‖ X ‖ Y (65 bytes).
    public let attestedPublicKey: Data

    /// Bounds the work on hostile input; Apple's receipts carry 8 to 10 fields.
    public static let maxFields = 64
    /// The largest metric accepted (nine digits): the value is a count of keys.
    public static let maxMetricDigits = 9

    /// Parses `content` (the CMS content, chunks already joined).
    public init(_ content: Data) throws(ReceiptFailure) {
        func refuse(_ detail: String) -> ReceiptFailure { ReceiptFailure(at: .payload, detail) }
        var fields: [Int: Data] = [:]
        do {
            var outer = DERReader(content)
            var set = try outer.read(tag: 0x31)
            guard outer.isAtEnd else { throw refuse("bytes after the payload's SET") }
            var count = 0
            while !set.isAtEnd {
                count += 1
                guard count <= Self.maxFields else { throw refuse("more than \(Self.maxFields) fields") }
                var sequence = try set.read(tag: 0x30)
                let type = try sequence.readSmallInteger()
                _ = try sequence.readSmallInteger()
                let value = try sequence.readOctetString()
                guard sequence.isAtEnd else { throw refuse("field \(type) has more than type, version and value") }
                guard fields.updateValue(value, forKey: type) == nil else { throw refuse("field \(type) appears twice") }
            }
        } catch let error as DERError {
            throw refuse("not DER SET OF SEQUENCE { INTEGER, INTEGER, OCTET STRING }: \(error)")
        } catch let error as ReceiptFailure {
            throw error
        } catch {
            throw refuse("\(error)")
        }

        func required(_ field: ReceiptField) throws(ReceiptFailure) -> Data {
            guard let value = fields[field.rawValue] else { throw refuse("field \(field.rawValue) (\(field)) is missing") }
            return value
        }
        func text(_ field: ReceiptField, _ value: Data) throws(ReceiptFailure) -> String {
            guard !value.isEmpty, value.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw refuse("field \(field.rawValue) (\(field)) is not printable ASCII")
            }
            return String(decoding: value, as: UTF8.self)
        }
        func time(_ field: ReceiptField, _ value: Data) throws(ReceiptFailure) -> Date {
            guard let date = ReceiptTime.parse(value) else { throw refuse("field \(field.rawValue) (\(field)) is not an RFC 3339 UTC time YYYY-MM-DDTHH:MM:SS[.f]Z") }
            return date
        }

        let typeText = try text(.type, try required(.type))
        guard let type = ReceiptType(rawValue: typeText) else { throw refuse("field 6 (type) is \(typeText.debugDescription), not ATTEST or RECEIPT") }
        self.type = type
        let appIDBytes = try required(.appID)
        appID = try text(.appID, appIDBytes)
        environment = try fields[ReceiptField.environment.rawValue].map { value throws(ReceiptFailure) in try text(.environment, value) }
        creation = try time(.creation, try required(.creation))
        expiration = try time(.expiration, try required(.expiration))
        token = try text(.token, try required(.token))
        clientHash = try required(.clientHash)

        attestedCertificate = try required(.attestedCertificate)
        switch CredentialCertificateKey.publicKey(attestedCertificate) {
        case .success(let key): attestedPublicKey = key
        case .failure(let error): throw refuse("field 3 is not a DER certificate of a P-256 key: \(error)")
        }

        // Refreshed receipts carry the metric and Not Before; an ATTEST receipt carries neither (read if present).
        let metricBytes = fields[ReceiptField.riskMetric.rawValue]
        let notBeforeBytes = fields[ReceiptField.notBefore.rawValue]
        if type == .receipt {
            guard metricBytes != nil else { throw refuse("field 17 (riskMetric) is missing from a RECEIPT") }
            guard notBeforeBytes != nil else { throw refuse("field 19 (notBefore) is missing from a RECEIPT") }
        }
        if let metricBytes {
            guard !metricBytes.isEmpty, metricBytes.count <= Self.maxMetricDigits,
                  metricBytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                throw refuse("field 17 (riskMetric) is not 1-\(Self.maxMetricDigits) decimal digits")
            }
            riskMetric = metricBytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        } else {
            riskMetric = nil
        }
        notBefore = try notBeforeBytes.map { value throws(ReceiptFailure) in try time(.notBefore, value) }
    }
}
