import FuzzChecks
import FuzzDriver

@_cdecl("FuzzReceipt_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzzOne)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ start: UnsafeRawPointer?, _ size: Int) -> CInt {
    fuzz(.receipt, start, size)
}
