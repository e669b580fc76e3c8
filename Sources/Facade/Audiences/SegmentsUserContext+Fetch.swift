import Foundation
import SegmentsDomain
import SegmentsData

extension SegmentsUserContext {
    /// Fetches the audience segments the user qualifies for and stores them in
    /// ``qualifiedSegments`` (<doc:Behaviour#O1>–<doc:Behaviour#O4>).
    ///
    /// - Parameter options: `.ignoreCache` (no cache read or write), `.resetCache` (empty the cache
    ///   for every user first), `.clearOnFailure` (a failure clears ``qualifiedSegments``; by
    ///   default it keeps the previous list).
    /// - Returns: the qualified segments, in the backend's order; `[]` without a request when the
    ///   client has no candidate segments.
    /// - Throws: ``SegmentsError`` `.invalidIdentifier` (ODP does not know the user), `.notEnabled`
    ///   (no ODP integration), or the fetch failure (reason in `message`, `httpStatus`, `underlying`).
    @discardableResult
    public func fetchQualifiedSegments(options: [AudienceSegmentOption] = []) async throws -> [String] {
        try await withCheckedThrowingContinuation { continuation in
            load(options) { continuation.resume(with: $0) }
        }
    }

    /// The completion-handler form: `completion` is called exactly once on the client's delivery
    /// queue, with `nil` on success (then ``qualifiedSegments`` holds the answer) or the error.
    public func fetchQualifiedSegments(
        options: [AudienceSegmentOption] = [], completion: @escaping @Sendable (SegmentsError?) -> Void
    ) {
        let queue = client.options.runtime.deliveryQueue
        load(options) { result in
            let error: SegmentsError?
            switch result {
            case .success: error = nil
            case .failure(let failure): error = failure
            }
            queue.async { completion(error) }
        }
    }

    /// The blocking form: waits at most `timeout` seconds for the fetch and returns its answer.
    ///
    /// It never needs the delivery queue, so calling it from a completion handler or listener cannot
    /// deadlock. Do not call it on the main thread of a UI app (it blocks the thread until the fetch
    /// ends or times out) nor from `async` code (use the `async` form there). A fetch that times out
    /// goes on in the background and still updates ``qualifiedSegments`` when it succeeds.
    ///
    /// - Throws: ``SegmentsError`` `.timeout` when `timeout` passes first, or the fetch's error.
    @available(*, noasync, message: "Blocks the thread; use the async fetchQualifiedSegments(options:) instead")
    @discardableResult
    public func fetchQualifiedSegments(options: [AudienceSegmentOption] = [], timeout: TimeInterval) throws -> [String] {
        let outcome = Locked<Result<[String], SegmentsError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        load(options) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        let seconds = timeout.isFinite ? max(0, timeout) : 365 * 24 * 3600
        guard done.wait(timeout: .now() + seconds) == .success, let result = outcome.value else {
            throw SegmentsError(.timeout, "Fetching qualified segments took longer than \(timeout) s")
        }
        return try result.get()
    }
}
