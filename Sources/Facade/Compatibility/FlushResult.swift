import Foundation
import SegmentsDomain
import SegmentsData

/// The outcome of ``Exponea/flushData(completion:)``: the Exponea SDK's type, case for case
/// (<doc:Behaviour#X1>, <doc:Behaviour#E5>).
///
/// `SegmentsClient.flush()` reports the same outcome as a ``SegmentsFlushResult``
/// (`Result<Int, SegmentsError>`); this type is made from it:
///
/// | ``SegmentsFlushResult`` | `FlushResult` |
/// |---|---|
/// | `.success(n)` | ``success(_:)`` with the same `n` |
/// | `.failure` with code `.network` (no connection, connection lost, DNS failure) | ``noInternetConnection`` |
/// | any other `.failure` | ``error(_:)`` with the ``SegmentsError`` |
///
/// ``flushAlreadyInProgress`` is never reported: a flush asked for while one runs joins it and
/// gets its outcome (<doc:Behaviour#E5>). The case is kept so an app's exhaustive `switch`
/// compiles unchanged.
public enum FlushResult: @unchecked Sendable {
    // `@unchecked`: the SDK only puts a `SegmentsError` (which is `Sendable`) in `.error`; an app
    // that makes its own value with another error keeps it on its own threads.

    /// The flush ended with nothing left to upload; the number of events and customer updates
    /// it uploaded.
    case success(Int)
    /// Never reported by this SDK: a second flush joins the running one (<doc:Behaviour#E5>).
    case flushAlreadyInProgress
    /// The upload could not reach the server (``SegmentsError/Code/network``). What is queued
    /// stays queued and is retried with backoff (<doc:Behaviour#E3>).
    case noInternetConnection
    /// Any other failure; the error is a ``SegmentsError``. What is queued stays queued unless the
    /// failure is permanent (<doc:Behaviour#E3>).
    case error(any Error)

    /// The Exponea SDK's form of a client's flush outcome, as in the table above.
    public init(_ result: SegmentsFlushResult) {
        switch result {
        case .success(let count): self = .success(count)
        case .failure(let error) where error.code == .network: self = .noInternetConnection
        case .failure(let error): self = .error(error)
        }
    }
}
