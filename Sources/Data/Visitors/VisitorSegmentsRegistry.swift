import Foundation
import SegmentsDomain

/// The reporting segments of every visitor (SPEC V1–V3): merged default dimensions and appended
/// custom segment ids, persisted through a ``VisitorSegmentsStore``, with a stream of changes.
///
/// Each call reads, changes, saves and announces under one lock, so concurrent callers never lose
/// an update and change events arrive in the order the changes were made. Every method is
/// synchronous and callable from any thread; the store's write happens before the call returns.
///
/// ```swift
/// let registry = VisitorSegmentsRegistry(store: InMemoryVisitorSegmentsStore(), logger: logger)
/// registry.setDefaultSegments(["country": "US", "devices": "mobile"], forVisitor: "user-123")
/// registry.setCustomSegments(["vip"], forVisitor: "user-123")
/// for await change in registry.changes(forVisitor: "user-123") { print(change.segments) }
/// ```
public final class VisitorSegmentsRegistry: Sendable {
    private struct Subscriber: Sendable {
        let visitorId: String?
        let continuation: AsyncStream<VisitorSegmentsChange>.Continuation
    }

    private struct State: Sendable {
        var visitors: [String: VisitorSegments] = [:]
        var subscribers: [UUID: Subscriber] = [:]
    }

    private let store: any VisitorSegmentsStore
    private let logger: any SegmentsLogger
    private let state = Locked(State())

    /// A registry over `store`; each visitor is read from the store on first use.
    public init(store: any VisitorSegmentsStore, logger: any SegmentsLogger) {
        self.store = store
        self.logger = logger
    }

    /// Merges `values` into the visitor's default segments (SPEC V1): the six keys `country`,
    /// `browser`, `devices`, `source`, `campaign`, `visitorType` are set, keys not given keep their
    /// value, unknown keys are logged as a warning and ignored. Never throws.
    ///
    /// - Returns: the visitor's segments after the call.
    @discardableResult
    public func setDefaultSegments(_ values: [String: String], forVisitor visitorId: String) -> VisitorSegments {
        var unknown: [String] = []
        let segments = update(visitorId, kind: .defaultSegments) { unknown = $0.mergeDefaultSegments(values) }
        if !unknown.isEmpty {
            logger.log(
                .warning, "Segments: Ignored unknown default segment keys \(unknown); known keys are "
                    + VisitorSegments.Key.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return segments
    }

    /// Appends `segmentIds` to the visitor's custom segments, skipping ids already present (SPEC V2).
    /// Never throws.
    ///
    /// - Returns: the visitor's segments after the call.
    @discardableResult
    public func setCustomSegments(_ segmentIds: [String], forVisitor visitorId: String) -> VisitorSegments {
        update(visitorId, kind: .customSegments) { $0.appendCustomSegments(segmentIds) }
    }

    /// The visitor's current segments (``VisitorSegments/empty`` for a visitor never set).
    public func segments(forVisitor visitorId: String) -> VisitorSegments {
        state.withLock { state in current(visitorId, &state) }
    }

    /// How many changes a subscriber may fall behind: 256. Past that the oldest unread ones are
    /// dropped — each change carries the visitor's full segments, so the newest still tells the
    /// current state — and a subscriber that never reads cannot make the process grow without bound.
    public static let changeBufferSize = 256

    /// Every later change, one element per `setDefaultSegments`/`setCustomSegments` call, in the
    /// order the changes were made; only those of `visitorId` when it is given. Ending the
    /// iteration ends the subscription. At most ``changeBufferSize`` unread changes are kept (the
    /// newest).
    public func changes(forVisitor visitorId: String? = nil) -> AsyncStream<VisitorSegmentsChange> {
        let id = UUID()
        return AsyncStream(bufferingPolicy: .bufferingNewest(Self.changeBufferSize)) { continuation in
            state.withLock { $0.subscribers[id] = Subscriber(visitorId: visitorId, continuation: continuation) }
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
            }
        }
    }

    /// Read, change, save and announce as one step under the lock (SPEC V3).
    private func update(
        _ visitorId: String, kind: VisitorSegmentsChange.Kind, _ change: (inout VisitorSegments) -> Void
    ) -> VisitorSegments {
        var saveError: (any Error)?
        let segments = state.withLock { state -> VisitorSegments in
            var segments = current(visitorId, &state)
            change(&segments)
            state.visitors[visitorId] = segments
            do {
                try store.save(segments, forVisitor: visitorId)
            } catch {
                saveError = error
            }
            let event = VisitorSegmentsChange(visitorId: visitorId, kind: kind, segments: segments)
            for subscriber in state.subscribers.values where subscriber.visitorId.map({ $0 == visitorId }) ?? true {
                subscriber.continuation.yield(event)
            }
            return segments
        }
        if let saveError {
            // The change stays in memory for this session; the next successful save persists it.
            logger.log(
                .error, "Segments: Could not save visitor segments: \(SegmentsError.wrapping(saveError, as: .storage))")
        }
        return segments
    }

    private func current(_ visitorId: String, _ state: inout State) -> VisitorSegments {
        if let known = state.visitors[visitorId] { return known }
        let loaded = store.segments(forVisitor: visitorId) ?? .empty
        state.visitors[visitorId] = loaded
        return loaded
    }
}
