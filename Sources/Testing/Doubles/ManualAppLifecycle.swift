import SegmentsDomain

/// An ``AppLifecycle`` that a test drives: ``post(_:)`` delivers an event as the platform would, and
/// every request for background time is recorded, so a test can check it was ended exactly when
/// it should be, and can run its time out with ``expireBackgroundTime()`` (Behaviour E2, E7 in
/// `Docs/Behaviour.md`, T11).
///
/// ```swift
/// let lifecycle = ManualAppLifecycle()
/// var options = SegmentsClient.Options(runtime: SegmentsRuntime(scheduler: scheduler, clock:
/// scheduler)) options.appLifecycle = lifecycle
/// // … configure, track …
/// lifecycle.post(.didEnterBackground)          // the flush starts; background time is asked for
/// #expect(lifecycle.openBackgroundTimeRequests == 1)
/// ```
public final class ManualAppLifecycle: AppLifecycle {
    /// One request for background time, as the fake saw it.
    public struct Request: Sendable, Equatable {
        /// The name the SDK gave it.
        public let name: String
        /// Whether it was ended (once: a request ends only once).
        public let ended: Bool
        /// Whether its time ran out (``expireBackgroundTime()``) before it ended.
        public let expired: Bool

        /// A request as a test expects to find it.
        public init(name: String, ended: Bool, expired: Bool) {
            self.name = name
            self.ended = ended
            self.expired = expired
        }
    }

    private struct Record {
        var name: String
        var ends = 0
        var ended: Bool { ends > 0 }
        var expired = false
        var expiration: (@Sendable () -> Void)?
    }

    private let observers = ObserverList<AppLifecycleEvent>()
    private let records = Locked<[Record]>([])

    /// A lifecycle in which nothing has happened yet.
    public init() {}

    /// Registers `handler` until the observation ends; ``post(_:)`` calls it.
    public func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) -> LifecycleObservation {
        observers.add(handler)
    }

    /// Records a request for background time, open until the SDK ends it; ``expireBackgroundTime()``
    /// calls `expiration` while it is open.
    public func beginBackgroundTime(named name: String, expiration: @escaping @Sendable () -> Void) -> BackgroundTimeRequest {
        let index = records.withLock { records in
            records.append(Record(name: name, expiration: expiration))
            return records.count - 1
        }
        return BackgroundTimeRequest { [records] in
            records.withLock { records in
                records[index].ends += 1
                records[index].expiration = nil
            }
        }
    }

    /// How many observations are live.
    public var observerCount: Int { observers.count }

    /// Delivers `event` to every live observer, on the calling thread, outside the lock, as the
    /// platform's notification would (the main thread, on Apple platforms).
    public func post(_ event: AppLifecycleEvent) {
        observers.notify(event)
    }

    /// Every request for background time so far, in the order they were made.
    public var backgroundTimeRequests: [Request] {
        records.withLock { $0.map { Request(name: $0.name, ended: $0.ended, expired: $0.expired) } }
    }

    /// How many times each request for background time was ended, in the order they were made: a
    /// request the SDK ends twice shows `2` here, where ``backgroundTimeRequests`` shows `ended`.
    public var backgroundTimeEndCounts: [Int] {
        records.withLock { $0.map(\.ends) }
    }

    /// How many requests for background time have not been ended.
    public var openBackgroundTimeRequests: Int {
        records.withLock { $0.filter { !$0.ended }.count }
    }

    /// Runs the time of every open request out: calls their expiration handlers, on the calling
    /// thread, outside the lock, as the platform would.
    public func expireBackgroundTime() {
        let expirations = records.withLock { records -> [@Sendable () -> Void] in
            var due: [@Sendable () -> Void] = []
            for index in records.indices where !records[index].ended {
                records[index].expired = true
                if let expiration = records[index].expiration { due.append(expiration) }
                records[index].expiration = nil
            }
            return due
        }
        for expiration in expirations { expiration() }
    }
}
