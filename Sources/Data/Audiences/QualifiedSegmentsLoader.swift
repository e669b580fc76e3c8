import Foundation
import SegmentsDomain

/// Loads the audience segments a user qualifies for, through an LRU cache, with one request per
/// user at a time (<doc:Behaviour#O2>–<doc:Behaviour#O4>).
///
/// - The cache keeps successful answers only, keyed by identifier field and value: 100 users for
///   600 s by default, on the injected ``SegmentsClock``'s monotonic uptime (<doc:Behaviour#T10>).
/// - Concurrent loads for one user (with the same candidates) that need the network share one
///   request; a load with `.ignoreCache` always sends its own request and stores nothing.
/// - `.resetCache` empties the cache for every user first; answers of requests that were already
///   in flight then no longer reach the cache.
/// - No candidates: the answer is `[]`, without a request.
///
/// The fetcher is told the options of the load that sent the request (joining loads send none).
///
/// All state sits behind one lock; requests start through the ``SegmentsScheduler``, so tests drive them
/// on virtual time. Completions run outside the lock: at once for a cache hit or no candidates,
/// otherwise on the request's task.
package final class QualifiedSegmentsLoader: Sendable {
    /// The answer of one load.
    package typealias Completion = @Sendable (Result<[String], SegmentsError>) -> Void

    private struct FlightKey: Hashable, Sendable {
        let identifier: AudienceIdentifier
        let candidates: [String]
    }

    private struct Flight: Sendable {
        let key: FlightKey
        let writesCache: Bool
        let cacheGeneration: Int
        var waiters: [Completion]
    }

    private struct State: Sendable {
        var cache: ExpiringLRUCache<AudienceIdentifier, [String]>
        /// Bumped by every reset, so a request started before it never fills the new cache.
        var cacheGeneration = 0
        var flights: [Int: Flight] = [:]
        /// The flight that loads which others may join, per user and candidates.
        var shared: [FlightKey: Int] = [:]
        var nextFlightId = 0
    }

    private let fetcher: any AudienceSegmentFetcher
    private let scheduler: any SegmentsScheduler
    private let clock: any SegmentsClock
    private let logger: any SegmentsLogger
    private let state: Locked<State>

    /// Creates a loader with an empty cache.
    ///
    /// - Parameters:
    ///   - fetcher: the backend, e.g. `ODPAudienceSegmentFetcher`.
    ///   - scheduler: starts each request.
    ///   - clock: the time of cache entries.
    ///   - logger: receives `Segments:` lines about failed fetches.
    ///   - cacheCapacity: the most users cached (100); 0 disables the cache.
    ///   - cacheTimeout: how long an answer stays cached, in seconds (600); 0 or less never expires.
    package init(
        fetcher: any AudienceSegmentFetcher, scheduler: any SegmentsScheduler, clock: any SegmentsClock, logger: any SegmentsLogger,
        cacheCapacity: Int = 100, cacheTimeout: TimeInterval = 600
    ) {
        self.fetcher = fetcher
        self.scheduler = scheduler
        self.clock = clock
        self.logger = logger
        state = Locked(State(cache: ExpiringLRUCache(capacity: cacheCapacity, timeout: cacheTimeout)))
    }

    /// Loads the segments among `candidates` that `identifier` qualifies for and answers exactly
    /// once with them, or with the fetch's ``SegmentsError``.
    package func qualifiedSegments(
        for identifier: AudienceIdentifier, candidates: [String], options: Set<AudienceSegmentOption> = [],
        completion: @escaping Completion
    ) {
        let key = FlightKey(identifier: identifier, candidates: candidates)
        let usesCache = !options.contains(.ignoreCache)
        let now = cacheTime()
        enum Step { case answer([String]), wait, start(Int) }
        let step = state.withLock { state -> Step in
            if options.contains(.resetCache) {
                state.cache.removeAll()
                state.cacheGeneration += 1
                state.shared.removeAll()
            }
            if candidates.isEmpty { return .answer([]) }
            if usesCache, let cached = state.cache.value(forKey: identifier, now: now) { return .answer(cached) }
            if usesCache, let id = state.shared[key] {
                state.flights[id]?.waiters.append(completion)
                return .wait
            }
            state.nextFlightId += 1
            let id = state.nextFlightId
            state.flights[id] = Flight(
                key: key, writesCache: usesCache, cacheGeneration: state.cacheGeneration, waiters: [completion])
            if usesCache { state.shared[key] = id }
            return .start(id)
        }
        switch step {
        case .answer(let segments):
            completion(.success(segments))
        case .wait:
            break
        case .start(let id):
            scheduler.schedule(after: 0) { await self.run(id, key, options) }
        }
    }

    /// The `async` form of ``qualifiedSegments(for:candidates:options:completion:)``: throws
    /// ``SegmentsError``. Cancelling the caller does not cancel a request other callers share.
    package func qualifiedSegments(
        for identifier: AudienceIdentifier, candidates: [String], options: Set<AudienceSegmentOption> = []
    ) async throws -> [String] {
        try await withCheckedThrowingContinuation { continuation in
            qualifiedSegments(for: identifier, candidates: candidates, options: options) {
                continuation.resume(with: $0)
            }
        }
    }

    /// Empties the cache for every user, as the `.resetCache` option does.
    package func resetCache() {
        state.withLock { state in
            state.cache.removeAll()
            state.cacheGeneration += 1
            state.shared.removeAll()
        }
    }

    /// Whether the cache holds a valid answer for `identifier` now.
    package func isCached(_ identifier: AudienceIdentifier) -> Bool {
        let now = cacheTime()
        return state.withLock { $0.cache.contains(identifier, now: now) }
    }

    /// The time cache entries age on: the clock's monotonic ``SegmentsClock/uptime()``
    /// (<doc:Behaviour#T10>), so setting the device's clock neither expires nor revives an answer.
    /// The cache compares only differences, so any fixed origin does.
    private func cacheTime() -> Date {
        Date(timeIntervalSinceReferenceDate: clock.uptime())
    }

    private func run(_ id: Int, _ key: FlightKey, _ options: Set<AudienceSegmentOption>) async {
        let result: Result<[String], SegmentsError>
        do {
            result = .success(
                try await fetcher.fetchQualifiedSegments(for: key.identifier, candidates: key.candidates, options: options))
        } catch {
            result = .failure(SegmentsError.wrapping(error))
        }
        let now = cacheTime()
        let waiters = state.withLock { state -> [Completion] in
            guard let flight = state.flights.removeValue(forKey: id) else { return [] }
            if state.shared[key] == id { state.shared[key] = nil }
            if case .success(let segments) = result, flight.writesCache,
                flight.cacheGeneration == state.cacheGeneration
            {
                state.cache.insert(segments, forKey: key.identifier, now: now)
            }
            return flight.waiters
        }
        if case .failure(let error) = result {
            logger.log(.warning, "Segments: Fetch of qualified segments failed: \(SegmentsError.summary(of: error))")
        }
        for waiter in waiters { waiter(result) }
    }
}
