/// An OpenSSL object (a key, a certificate, a store, a digest context, a CMS structure) that its owner fills in
/// its initialiser and never changes afterwards: once published, it is only passed to functions that read it
/// (OpenSSL's threading rules let any number of threads read one object at once), and it is freed in the
/// owner's `deinit`. The owners are then checked `Sendable` classes: the compiler checks every other property.
struct OpenSSLHandle: @unchecked Sendable { // Unchecked: a C pointer to an object only read once shared (above).
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }
}
