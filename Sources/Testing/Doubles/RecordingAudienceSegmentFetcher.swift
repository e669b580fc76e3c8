import Foundation
import SegmentsDomain

/// A scriptable ``AudienceSegmentFetcher`` that records every call, options included.
///
/// Answers come, in this order, from scripted one-off results (``failNextFetches(_:with:)``,
/// ``answerNextFetch(with:)``), from answers per user id, then from the answer for every user
/// (`[]` by default). Each answer keeps only the names among the call's candidates, as the backend
/// does, unless ``filtersByCandidates`` is `false`: then it is returned exactly as scripted, as a
/// fixed list. With a ``delay`` (on the given scheduler's virtual time) the answer comes that much later.
///
/// ```swift
/// let scheduler = TestScheduler()
/// let fetcher = RecordingAudienceSegmentFetcher(scheduler: scheduler)
/// fetcher.answer(["seg-1"], forUserId: "user123")
/// fetcher.delay = 1
/// // … after a fetch with options [.ignoreCache]:
/// #expect(fetcher.calls.last?.options == [.ignoreCache])
/// ```
public final class RecordingAudienceSegmentFetcher: AudienceSegmentFetcher, Sendable {
    /// One call the fetcher received.
    public struct Call: Hashable, Sendable {
        /// Whom it was about.
        public let identifier: AudienceIdentifier
        /// The candidates asked about.
        public let candidates: [String]
        /// The options of the fetch that sent the request (empty when called without options).
        public let options: Set<AudienceSegmentOption>

        /// A call.
        public init(identifier: AudienceIdentifier, candidates: [String], options: Set<AudienceSegmentOption> = []) {
            self.identifier = identifier
            self.candidates = candidates
            self.options = options
        }
    }

    private struct State: Sendable {
        var defaultAnswer: [String] = []
        var answersByUser: [String: [String]] = [:]
        var scripted: [Result<[String], SegmentsError>] = []
        var delay: TimeInterval = 0
        var filtersByCandidates = true
        var calls: [Call] = []
    }

    private let scheduler: (any SegmentsScheduler)?
    private let state = Locked(State())

    /// A fetcher answering `[]`; `scheduler` provides the time for ``delay``.
    public init(scheduler: (any SegmentsScheduler)? = nil) {
        self.scheduler = scheduler
    }

    /// How long each call takes on the scheduler's time (0 by default). Needs a scheduler.
    public var delay: TimeInterval {
        get { state.withLock { $0.delay } }
        set { state.withLock { $0.delay = newValue } }
    }

    /// Whether answers keep only the names among the call's candidates, as a backend does (`true`,
    /// the default). Set it to `false` to answer fixed lists exactly as scripted, e.g. to port a
    /// test whose stand-in backend returns a constant list.
    public var filtersByCandidates: Bool {
        get { state.withLock { $0.filtersByCandidates } }
        set { state.withLock { $0.filtersByCandidates = newValue } }
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

    /// Answers per the script, after ``delay``; records the call without options.
    public func fetchQualifiedSegments(for identifier: AudienceIdentifier, candidates: [String]) async throws -> [String] {
        try await fetchQualifiedSegments(for: identifier, candidates: candidates, options: [])
    }

    /// Answers per the script, after ``delay``; records the call with its options.
    public func fetchQualifiedSegments(
        for identifier: AudienceIdentifier, candidates: [String], options: Set<AudienceSegmentOption>
    ) async throws -> [String] {
        let (result, delay, filters) = state.withLock { state in
            state.calls.append(Call(identifier: identifier, candidates: candidates, options: options))
            let result: Result<[String], SegmentsError>
            if !state.scripted.isEmpty {
                result = state.scripted.removeFirst()
            } else {
                result = .success(state.answersByUser[identifier.value] ?? state.defaultAnswer)
            }
            return (result, state.delay, state.filtersByCandidates)
        }
        if delay > 0, let scheduler { await scheduler.sleep(for: delay) }
        let answer = try result.get()
        return filters ? answer.filter(candidates.contains) : answer
    }
}
