// Shared by every fuzz target (compiled into each harness by Scripts/fuzz.sh).
import Foundation

/// Stops the run with `message` when an invariant of the code under test does not hold, so
/// libFuzzer records the input as a crash. Used instead of `precondition`, which `-Ounchecked`
/// would drop.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("fuzz invariant violated: \(message())") }
}

/// The input as `Data`, copied so the code under test never sees libFuzzer's buffer.
func fuzzData(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Data {
    Data(UnsafeBufferPointer(start: bytes, count: count))
}
