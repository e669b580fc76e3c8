import Foundation
import SegmentsDomain

/// A scriptable ``AudienceSegmentFetcher`` that records every call.
///
/// Answers come, in this order, from scripted one-off results (``failNextFetches(_:with:)``,
/// ``answerNextFetch(with:)``), from answers per user id, then from the answer for every user
/// (`[]` by default). Each answer keeps only the names among the call's candidates, as the backend
/// does. With a ``delay`` (on the given scheduler's virtual time) the answer comes that much later.
///
/// ```swift
/// let scheduler = TestScheduler()
/// let fetcher = RecordingAudienceSegmentFetcher(scheduler: scheduler)
/// fetcher.answer(["seg-1"], forUserId: "user123")
/// fetcher.delay = 1
/// ```
public final class RecordingAudienceSegmentFetcher: AudienceSegmentFetcher, Sendable {
    /// One call the fetcher received.
    public struct Call: Hashable, Sendable {
        /// Whom it was about.
        public let identifier: AudienceIdentifier
        /// The candidates asked about.
        public let candidates: [String]

        /// A call.
        public init(identifier: AudienceIdentifier, candidates: [String]) {
            self.identifier = identifier
            self.candidates = candidates
        }
    }

    private struct State: Sendable {
        var defaultAnswer: [String] = []
        var answersByUser: [String: [String]] = [:]
        var scripted: [Result<[String], SegmentsError>] = []
        var delay: TimeInterval = 0
        var calls: [Call] = []
    }

    private let scheduler: (any Scheduler)?
    private let state = Locked(State())

    /// A fetcher answering `[]`; `scheduler` provides the time for ``delay``.
    public init(scheduler: (any Scheduler)? = nil) {
        self.scheduler = scheduler
    }

    /// How long each call takes on the scheduler's time (0 by default). Needs a scheduler.
    public var delay: TimeInterval {
        get { state.withLock { $0.delay } }
        set { state.withLock { $0.delay = newValue } }
    }

    /// Sets the qualified segments of `userId`, or of every user without an answer of its own when `nil`.
    public func answer(_ segments: [String], forUserId userId: String? = nil) {
        state.withLock { state in
            if let userId { state.answersByUser[userId] = segments } else { state.defaultAnswer = segments }
        }
    }

    /// Makes the next fetch answer `segments`, whatever the user.
    public func answerNextFetch(with segments: [String]) {
        state.withLock { $0.scripted.append(.success(segments)) }
    }

    /// Makes the next `count` fetches throw `error`.
    public func failNextFetches(_ count: Int = 1, with error: SegmentsError) {
        state.withLock { $0.scripted += Array(repeating: .failure(error), count: count) }
    }

    /// Every call received, oldest first.
    public var calls: [Call] { state.withLock { $0.calls } }

    /// How many calls were received.
    public var callCount: Int { state.withLock { $0.calls.count } }

    /// Answers per the script, after ``delay``.
    public func fetchQualifiedSegments(for identifier: AudienceIdentifier, candidates: [String]) async throws -> [String] {
        let (result, delay) = state.withLock { state in
            state.calls.append(Call(identifier: identifier, candidates: candidates))
            let result: Result<[String], SegmentsError>
            if !state.scripted.isEmpty {
                result = state.scripted.removeFirst()
            } else {
                result = .success(state.answersByUser[identifier.value] ?? state.defaultAnswer)
            }
            return (result, state.delay)
        }
        if delay > 0, let scheduler { await scheduler.sleep(for: delay) }
        return try result.get().filter(candidates.contains)
    }
}
