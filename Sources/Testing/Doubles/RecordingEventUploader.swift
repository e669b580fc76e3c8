import Foundation
import SegmentsDomain

/// A scriptable ``EventUploader`` that records every upload it accepts.
///
/// Uploads succeed unless failures are scripted with ``failNextUploads(_:with:)``; with a
/// ``delay`` (on the given scheduler's virtual time) each upload takes that long.
public final class RecordingEventUploader: EventUploader, Sendable {
    private struct State: Sendable {
        var failures: [SegmentsError] = []
        var attempts: [TrackedEvent] = []
        var accepted: [TrackedEvent] = []
        var delay: TimeInterval = 0
    }

    private let scheduler: (any SegmentsScheduler)?
    private let state = Locked(State())
    private let onAccept: (@Sendable (TrackedEvent) -> Void)?

    /// An uploader that accepts everything; `onAccept` runs as each upload is accepted, before
    /// `upload` returns (e.g. to simulate a crash right after the server took an event).
    public init(scheduler: (any SegmentsScheduler)? = nil, onAccept: (@Sendable (TrackedEvent) -> Void)? = nil) {
        self.scheduler = scheduler
        self.onAccept = onAccept
    }

    /// How long each upload takes on the scheduler's time (0 by default). Needs a scheduler.
    public var delay: TimeInterval {
        get { state.withLock { $0.delay } }
        set { state.withLock { $0.delay = newValue } }
    }

    /// Makes the next `count` uploads throw `error`.
    public func failNextUploads(_ count: Int = 1, with error: SegmentsError) {
        state.withLock { $0.failures += Array(repeating: error, count: count) }
    }

    /// Every upload attempted, oldest first, failed ones included.
    public var attempts: [TrackedEvent] { state.withLock { $0.attempts } }

    /// Every upload accepted, oldest first.
    public var accepted: [TrackedEvent] { state.withLock { $0.accepted } }

    /// Accepts `event` or throws the next scripted failure, after ``delay``.
    public func upload(_ event: TrackedEvent) async throws {
        let (failure, delay) = state.withLock { state in
            state.attempts.append(event)
            return (state.failures.isEmpty ? nil : state.failures.removeFirst(), state.delay)
        }
        if delay > 0, let scheduler { await scheduler.sleep(for: delay) }
        if let failure { throw failure }
        state.withLock { $0.accepted.append(event) }
        onAccept?(event)
    }
}
