#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SegmentsDomain

/// The system refused to open, read or write a stored file with `EPERM` or `EACCES`: on Apple
/// platforms, what a file protected until the first unlock answers before it (<doc:Behaviour#P8>).
///
/// The one place that knows these `errno` values mean "not now" rather than "broken": the stores
/// recognise it with ``isProtectedDataUnavailable(_:)`` and treat the failure as transient —
/// nothing is deleted or set aside, the value stays in memory, and the load or save is done again
/// when protected data becomes available. (A real permission problem looks the same; keeping the
/// file and retrying later is the safe answer to it too.)
struct ProtectedDataUnavailable: Error, Hashable, Sendable {
    /// The `errno` the call set: `EPERM` or `EACCES`.
    let code: Int32

    /// Whether the failed `operation` (`open`, `create`, `read`, `write`) with `code` is a refusal of
    /// protected data.
    static func refuses(_ operation: String, code: Int32) -> Bool {
        (code == EPERM || code == EACCES) && ["open", "create", "read", "write"].contains(operation)
    }

    /// Whether `error`, or an error it wraps, is a refusal of protected data.
    static func isProtectedDataUnavailable(_ error: any Error) -> Bool {
        if error is ProtectedDataUnavailable { return true }
        if let wrapped = (error as? SegmentsError)?.underlying { return isProtectedDataUnavailable(wrapped) }
        return false
    }
}

extension SegmentsError {
    /// Whether the storage refused a file because protected data is not available yet
    /// (<doc:Behaviour#P8>): transient, retried when it becomes available.
    package var isProtectedDataUnavailable: Bool {
        ProtectedDataUnavailable.isProtectedDataUnavailable(self)
    }
}
