import TwoBitsCrypto
import WireFormats

/// The JSON parser: parse either succeeds or throws `JSONError` at an offset inside the input; what it
/// accepts, serialised, parses to the same value and serialises to the same text; what the request
/// limits accept, the configuration limits accept too, as the same value.
enum JSONCheck {
    static func check(_ input: [UInt8]) -> String? {
        let value: JSONValue
        do {
            value = try JSONValue.parse(input)
        } catch {
            guard (0...input.count).contains(error.offset) else { return "error offset \(error.offset) outside 0...\(input.count): \(error)" }
            return nil
        }
        let text = value.serialized()
        let again: JSONValue
        do { again = try JSONValue.parse(text, limits: .configuration) } catch { return "serialisation does not parse: \(error): \(text.prefix(200))" }
        guard again == value else { return "serialisation parses to another value: \(text.prefix(200))" }
        guard again.serialized() == text else { return "serialisation is not stable: \(text.prefix(200))" }
        guard (try? JSONValue.parse(input, limits: .configuration)) == value else { return "the configuration limits read it differently" }
        return nil
    }
}
