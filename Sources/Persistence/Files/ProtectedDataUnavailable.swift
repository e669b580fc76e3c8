#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SegmentsDomain

/// The system refused to open, read or write a stored file with `EPERM` or `EACCES`: on Apple
/// platforms, what a file protected until the first unlock answers before it — and, anywhere, what
/// a real permission problem answers (<doc:Behaviour#P8>).
///
/// The errors of ``POSIXFile`` carry this mark; what it means is decided by a store's
/// ``StorageRefusals``, which asks the platform whether protected data is available: only a refusal
/// while it is not is transient. The stores recognise a transient refusal with
/// ``isProtectedDataUnavailable(_:)`` after ``StorageRefusals/settled(_:)``, which takes the mark off
/// every other refusal.
struct ProtectedDataUnavailable: Error, Hashable, Sendable {
    /// The `errno` the call set: `EPERM` or `EACCES`.
    let code: Int32

    /// Whether the failed `operation` (`open`, `create`, `read`, `write`) with `code` is a refusal
    /// that protected data may explain.
    static func refuses(_ operation: String, code: Int32) -> Bool {
        (code == EPERM || code == EACCES) && ["open", "create", "read", "write"].contains(operation)
    }

    /// Whether `error`, or an error it wraps, carries the mark.
    static func isProtectedDataUnavailable(_ error: any Error) -> Bool {
        if error is ProtectedDataUnavailable { return true }
        if let wrapped = (error as? SegmentsError)?.underlying { return isProtectedDataUnavailable(wrapped) }
        return false
    }

    /// `error` without the mark: the same message and code, the `errno` as a plain
    /// ``SystemCallError``.
    static func unmarked(_ error: any Error) -> any Error {
        if let refusal = error as? ProtectedDataUnavailable { return SystemCallError(code: refusal.code) }
        guard let error = error as? SegmentsError, let underlying = error.underlying, isProtectedDataUnavailable(underlying)
        else { return error }
        return SegmentsError(
            error.code, error.message, httpStatus: error.httpStatus, retryAfter: error.retryAfter,
            underlying: unmarked(underlying))
    }
}

/// How a store tells a refusal of a stored file that protected data explains — transient — from a
/// permission problem, a `.storage` error (<doc:Behaviour#P8>): it asks the platform, and only when
/// the system refused a file.
///
/// A store the client makes is given the client's ``ProtectedDataAvailability``: on a platform
/// without data protection (Linux, macOS) it reports protected data available, so a refusal there
/// is always a `.storage` error (a lock file of mode 000 or a read-only folder must not look like a
/// device waiting for its first unlock). A store the app makes itself has no such report
/// (``unreported``): on iOS and visionOS its refusals stay transient, as before the first unlock
/// (the store's next call tries again); elsewhere they are `.storage` errors.
package struct StorageRefusals: Sendable {
    private let protectedData: (any ProtectedDataAvailability)?

    /// Refusals judged by what `protectedData` reports.
    package init(protectedData: any ProtectedDataAvailability) {
        self.protectedData = protectedData
    }

    private init() {
        protectedData = nil
    }

    /// Refusals judged without a report (see the type's documentation).
    package static let unreported = StorageRefusals()

    /// Whether protected data is available now.
    var protectedDataIsAvailable: Bool {
        if let protectedData { return protectedData.isProtectedDataAvailable }
        #if os(iOS) || os(visionOS)
        return false
        #else
        return true
        #endif
    }

    /// `error` as a failure, settled (``settled(_:)``), or `nil` when it is a transient refusal: a
    /// refused file while protected data is unavailable. The platform is asked once, and only when
    /// the error is a refusal.
    func failure(_ error: any Error) -> (any Error)? {
        let settled = settled(error)
        return ProtectedDataUnavailable.isProtectedDataUnavailable(settled) ? nil : settled
    }

    /// `error` as the store must treat it: a transient refusal keeps its mark (then
    /// `isProtectedDataUnavailable`); any other refusal loses it and is a plain storage error.
    func settled(_ error: any Error) -> any Error {
        guard ProtectedDataUnavailable.isProtectedDataUnavailable(error), protectedDataIsAvailable else { return error }
        return ProtectedDataUnavailable.unmarked(error)
    }
}

extension SegmentsError {
    /// Whether the storage refused a file because protected data is not available yet
    /// (<doc:Behaviour#P8>): transient, retried when it becomes available. Meaningful on an error
    /// settled by a store's ``StorageRefusals``: before that, any refusal answers `true`.
    package var isProtectedDataUnavailable: Bool {
        ProtectedDataUnavailable.isProtectedDataUnavailable(self)
    }
}
