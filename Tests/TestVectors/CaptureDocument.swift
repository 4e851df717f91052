/// One YAML document of veehaitch's captures (`app-attest-devicecheck-appattest/ios-14.*.yaml`): top-level
/// `key: value` scalars, `key: |` blocks (the PEM keys) and one nested map, `properties`. Only that shape: a
/// tiny reader, not YAML (the project has no YAML parser); anything else throws, so a changed file fails loudly.
public struct CaptureDocument: Sendable {
    /// The top-level scalars and blocks (blocks keep their line breaks); an empty value is "".
    public let fields: [String: String]
    /// The `properties` map (what veehaitch's verifier read from a receipt); a null (empty) value is absent.
    public let properties: [String: String]

    public subscript(key: String) -> String? { fields[key] }
}
