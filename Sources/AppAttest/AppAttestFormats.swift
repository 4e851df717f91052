// What an App Attest verifier and an emulator of Apple both need (CBOR, authenticator data, app ids and
// environments, the failures' vocabulary, receipt payloads and times) lives below the sandbox, in
// AppAttestFormats; every user of the verifiers sees it through this module.
@_exported public import AppAttestFormats
