import FuzzChecks

// What every fuzz target shares. SwiftPM links an executable with `--defsym main=<Target>_main`, so
// each target defines that symbol (and libFuzzer's callback, which libFuzzer's own archive refers to)
// with `@_cdecl`, and both hand over to the functions here. Recipe: Tests/Fuzz/README.md.

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ body: @convention(c) (UnsafeRawPointer?, Int) -> CInt) -> CInt

/// Hands the process's arguments to libFuzzer's driver, which calls `body` for every input.
public func runLibFuzzer(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                         _ body: @convention(c) (UnsafeRawPointer?, Int) -> CInt) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, body)
}

/// Runs `target`'s property check on one input (libFuzzer passes a null pointer for the empty input).
public func fuzz(_ target: FuzzTarget, _ start: UnsafeRawPointer?, _ size: Int) -> CInt {
    target.fuzz(start ?? UnsafeRawPointer(bitPattern: 1)!, start == nil ? 0 : size)
    return 0
}
