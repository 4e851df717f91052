import FuzzChecks

// libFuzzer's entry points (recipe: docs in Tests/Fuzz/README.md). SwiftPM links an executable with
// `--defsym main=FuzzJSON_main`, so that symbol hands control to libFuzzer's driver.

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ body: @convention(c) (UnsafeRawPointer?, Int) -> CInt) -> CInt

@_cdecl("FuzzJSON_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzzOne)
}

/// libFuzzer's callback (its archive's own `main` refers to this name too, so it must exist).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ start: UnsafeRawPointer?, _ size: Int) -> CInt {
    FuzzTarget.json.fuzz(start ?? UnsafeRawPointer(bitPattern: 1)!, start == nil ? 0 : size)
    return 0
}
