import Foundation

/// Why the emulator could not start listening.
public struct EmulatorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The system call that failed, e.g. `bind`.
    public var operation: String
    /// The `errno` it left.
    public var code: Int32

    /// Creates an error.
    public init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// `bind failed: Address already in use (errno 98)`.
    public var description: String {
        "\(operation) failed: \(EmulatorPOSIX.message(forError: code)) (errno \(code))"
    }
}
