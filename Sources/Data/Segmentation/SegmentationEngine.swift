import Foundation
import SegmentsDomain

/// The real-time segmentation core of one client: listeners, automatic reloads, change delivery
/// and one-shot reads (SPEC T, C, D, G, A).
///
/// All state sits behind one lock, so the synchronous entry points (`addListener`,
/// `removeListener`, the completion form of `getSegments`) keep their call order from any thread.
/// Every asynchronous step — debounce, backoff, each fetch — goes through the injected
/// ``Scheduler``, so tests drive the engine on virtual time. Deliveries run on one serial
/// delivery queue, never under the lock (SPEC D8).
public final class SegmentationEngine: Sendable {
    /// The ports that live as long as the engine.
    public struct Dependencies: Sendable {
        /// Debounce, backoff and every asynchronous step.
        public var scheduler: any Scheduler
        /// Freshness and `fetchedAt`.
        public var clock: any Clock
        /// Where `Segments:` lines go.
        public var logger: any SegmentsLogger
        /// The serial queue listeners and one-shot reads are called on.
        public var deliveryQueue: DispatchQueue
        /// Every timing.
        public var timings: SegmentationTimings
        /// A value in `0..<1` for backoff jitter.
        public var random: @Sendable () -> Double
        /// A new anonymous cookie.
        public var makeCookie: @Sendable () -> String

        /// Creates the dependencies; the defaults are the live ones.
        public init(
            scheduler: any Scheduler = TaskScheduler(), clock: any Clock = SystemClock(),
            logger: any SegmentsLogger,
            deliveryQueue: DispatchQueue = DispatchQueue(label: "RealtimeSegments.delivery"),
            timings: SegmentationTimings = SegmentationTimings(),
            random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
            makeCookie: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() }
        ) {
            self.scheduler = scheduler
            self.clock = clock
            self.logger = logger
            self.deliveryQueue = deliveryQueue
            self.timings = timings
            self.random = random
            self.makeCookie = makeCookie
        }
    }

    /// The ports of one configured integration.
    public struct Backend: Sendable {
        /// Where segments come from.
        public var repository: any SegmentRepository
        /// The current customer's ids.
        public var customerStore: any CustomerStore
        /// The baseline and link memory.
        public var baselineStore: any SegmentBaselineStore

        /// Creates a backend.
        public init(
            repository: any SegmentRepository, customerStore: any CustomerStore,
            baselineStore: any SegmentBaselineStore
        ) {
            self.repository = repository
            self.customerStore = customerStore
            self.baselineStore = baselineStore
        }
    }

    let dependencies: Dependencies
    let state = Locked(EngineState())

    /// An unconfigured engine: listeners and reads can be registered; they are served after
    /// ``configure(_:)``.
    public init(dependencies: Dependencies) {
        self.dependencies = dependencies
    }

    /// Runs `body` under the lock, then writes its log lines.
    @discardableResult
    func mutate<Result>(_ body: (inout EngineState, inout EngineEffects) -> Result) -> Result {
        var effects = EngineEffects()
        let result = state.withLock { body(&$0, &effects) }
        for (level, message) in effects.logs {
            dependencies.logger.log(level, message)
        }
        return result
    }

    var now: Date { dependencies.clock.now() }
}
