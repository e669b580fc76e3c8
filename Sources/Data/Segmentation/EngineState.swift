import Foundation
import SegmentsDomain

/// Everything the segmentation engine knows, guarded by its one lock.
struct EngineState: Sendable {
    enum Phase: Sendable {
        /// Not configured yet: listeners and reads wait (SPEC T2, G4).
        case unconfigured
        /// Configured with a backend.
        case running(SegmentationEngine.Backend)
        /// Stopped: work is rejected until configured again (SPEC A3).
        case stopped
    }

    /// One fetch (with its link) for one customer snapshot (SPEC C1).
    struct Flight: Sendable {
        let id: Int
        let customer: CustomerIds
        let needsLink: Bool
        let repository: any SegmentRepository
        /// Whether the flight carries an automatic reload (failures are retried, SPEC T7).
        let automatic: Bool
    }

    /// A one-shot read waiting for the network or for configuration (SPEC G).
    struct PendingRead: Sendable {
        /// Identifies the read, so a cancelled task can withdraw it.
        let id: Int
        let category: SegmentCategory
        let force: Bool
        let completion: @Sendable (Result<[Segment], SegmentsError>) -> Void
        /// How often the read was retried because the customer changed (SPEC G6).
        var customerRetries = 0
    }

    /// Debounce, retry and follow-up bookkeeping of automatic reloads (SPEC T5–T7).
    struct Reloads: Sendable {
        var burstStart: Date?
        var lastRequest: Date?
        var debounce: ScheduledWork?
        var retry: ScheduledWork?
        var retryAttempt = 0
        /// Bumped whenever the debounce or retry is replaced or cancelled, so work that was
        /// already due when it was replaced does nothing.
        var debounceGeneration = 0
        var retryGeneration = 0
        /// A request arrived during a flight: one follow-up reload is owed (SPEC T6).
        var dirty = false
    }

    var phase: Phase = .unconfigured
    var customer: CustomerIds?
    var baseline = SegmentBaseline.empty
    var listeners = ListenerRegistry()
    var reloads = Reloads()
    var flight: Flight?
    var nextFlightId = 0
    var nextReadId = 0
    var reads: [PendingRead] = []
    var trackingIsImmediate = true
    var warnedTrackingNotImmediate = false

    var backend: SegmentationEngine.Backend? {
        if case .running(let backend) = phase { return backend }
        return nil
    }
}

/// What the engine does once its lock is released: log lines, in order.
struct EngineEffects {
    var logs: [(LogLevel, String)] = []

    mutating func log(_ level: LogLevel, _ message: String) {
        logs.append((level, message))
    }
}
