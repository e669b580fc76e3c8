import Foundation
import SegmentsDomain

/// A scriptable ``SegmentRepository`` that records every call.
///
/// Answers come, in this order, from scripted one-off results (``failNextFetches(_:with:)``,
/// ``answerNextFetch(with:)``), from answers per customer (``answer(_:forCustomerIds:)``, or
/// ``answer(_:forCookie:)`` for the anonymous id), then from the answer for everyone. The answer is
/// chosen when the call starts, like a server would; with a ``delay`` (on the given scheduler's
/// virtual time) it is returned that much later.
///
/// ```swift
/// let scheduler = TestScheduler()
/// let repository = RecordingSegmentRepository(scheduler: scheduler)
/// repository.answer([.discovery(): [Segment(id: "s1", segmentationId: "g1")]])
/// repository.answer([.discovery(): [vip]], forCustomerIds: ["registered": "jane@example.com"])
/// repository.delay = 2
/// ```
public final class RecordingSegmentRepository: SegmentRepository, Sendable {
    /// One call the repository received.
    public enum Call: Hashable, Sendable {
        /// A fetch for the customer.
        case fetch(CustomerIds)
        /// A link of the customer's ids.
        case link(CustomerIds)
    }

    private struct State: Sendable {
        var defaultAnswer: SegmentsByCategory = [:]
        /// Answers per customer, oldest first: the last one whose ids the customer has wins.
        var answersByIds: [(ids: [String: String], answer: SegmentsByCategory)] = []
        var scriptedFetches: [Result<SegmentsByCategory, SegmentsError>] = []
        var scriptedLinks: [SegmentsError] = []
        var delay: TimeInterval = 0
        var calls: [Call] = []
        var callsInProgress = 0
        var peakCallsInProgress = 0

        /// The last answer set for ids the customer has, else the answer for everyone.
        func answer(for customer: CustomerIds) -> SegmentsByCategory {
            let match = answersByIds.last { entry in
                entry.ids.allSatisfy { customer.values[$0.key] == $0.value }
            }
            return match?.answer ?? defaultAnswer
        }

        mutating func began() {
            callsInProgress += 1
            peakCallsInProgress = max(peakCallsInProgress, callsInProgress)
        }
    }

    private let scheduler: (any SegmentsScheduler)?
    private let state = Locked(State())

    /// A repository answering `[:]`; `scheduler` provides the time for ``delay``.
    public init(scheduler: (any SegmentsScheduler)? = nil) {
        self.scheduler = scheduler
    }

    /// How long each call takes on the scheduler's time (0 by default). Needs a scheduler.
    public var delay: TimeInterval {
        get { state.withLock { $0.delay } }
        set { state.withLock { $0.delay = newValue } }
    }

    /// Sets the answer for `cookie`, or for every customer without an answer of its own when `nil`.
    ///
    /// `answer(segments, forCookie: cookie)` is `answer(segments, forCustomerIds: ["cookie": cookie])`.
    public func answer(_ segments: SegmentsByCategory, forCookie cookie: String? = nil) {
        guard let cookie else {
            state.withLock { $0.defaultAnswer = segments }
            return
        }
        answer(segments, forCustomerIds: [CustomerIds.cookieKey: cookie])
    }

    /// Sets the answer for every customer that has all of `ids`, whatever other ids it has: e.g.
    /// `["registered": "jane@example.com"]` answers Jane once she is identified, whatever her
    /// random cookie.
    ///
    /// When answers for several id maps match a customer, the one set last wins; setting an answer
    /// for the same map again replaces it (and makes it the last set). An empty map matches every
    /// customer, like ``answer(_:forCookie:)`` with `nil`, but comes before it.
    public func answer(_ segments: SegmentsByCategory, forCustomerIds ids: [String: String]) {
        state.withLock { state in
            state.answersByIds.removeAll { $0.ids == ids }
            state.answersByIds.append((ids, segments))
        }
    }

    /// Makes the next fetch answer `segments`, whatever the customer.
    public func answerNextFetch(with segments: SegmentsByCategory) {
        state.withLock { $0.scriptedFetches.append(.success(segments)) }
    }

    /// Makes the next `count` fetches throw `error`.
    public func failNextFetches(_ count: Int = 1, with error: SegmentsError) {
        state.withLock { $0.scriptedFetches += Array(repeating: .failure(error), count: count) }
    }

    /// Makes the next `count` links throw `error`.
    public func failNextLinks(_ count: Int = 1, with error: SegmentsError) {
        state.withLock { $0.scriptedLinks += Array(repeating: error, count: count) }
    }

    /// Every call received, oldest first.
    public var calls: [Call] { state.withLock { $0.calls } }

    /// The customers fetched for, oldest first.
    public var fetches: [CustomerIds] {
        calls.compactMap { if case .fetch(let customer) = $0 { customer } else { nil } }
    }

    /// The most calls (fetches and links) that were ever in progress at once: 1 proves the
    /// repository never saw two concurrent requests.
    public var peakConcurrentCalls: Int { state.withLock { $0.peakCallsInProgress } }

    /// The customers linked, oldest first.
    public var links: [CustomerIds] {
        calls.compactMap { if case .link(let customer) = $0 { customer } else { nil } }
    }

    /// Answers per the script, after ``delay``.
    public func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory {
        let (result, delay) = state.withLock { state in
            state.calls.append(.fetch(customer))
            state.began()
            let result: Result<SegmentsByCategory, SegmentsError>
            if !state.scriptedFetches.isEmpty {
                result = state.scriptedFetches.removeFirst()
            } else {
                result = .success(state.answer(for: customer))
            }
            return (result, state.delay)
        }
        await wait(delay)
        state.withLock { $0.callsInProgress -= 1 }
        return try result.get()
    }

    /// Succeeds or throws per the script, after ``delay``.
    public func linkCustomerIds(_ customer: CustomerIds) async throws {
        let (failure, delay) = state.withLock { state in
            state.calls.append(.link(customer))
            state.began()
            return (state.scriptedLinks.isEmpty ? nil : state.scriptedLinks.removeFirst(), state.delay)
        }
        await wait(delay)
        state.withLock { $0.callsInProgress -= 1 }
        if let failure { throw failure }
    }

    private func wait(_ delay: TimeInterval) async {
        guard delay > 0, let scheduler else { return }
        await scheduler.sleep(for: delay)
    }
}
