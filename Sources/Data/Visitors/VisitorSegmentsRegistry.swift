import Foundation
import SegmentsDomain

/// The reporting segments of every visitor (<doc:Behaviour#V1>–<doc:Behaviour#V3>): merged default
/// dimensions and appended custom segment ids, persisted through a ``VisitorSegmentsStore``, with a
/// stream of changes.
///
/// Each call reads, changes and announces under one lock, so concurrent callers never lose an
/// update and change events arrive in the order the changes were made. Every method is
/// synchronous and callable from any thread. Saves run on the registry's serial storage queue, in
/// the order of the changes, so no caller waits for a file write or an `fsync` (<doc:Behaviour#R1>);
/// ``waitUntilSaved()`` waits for them when that matters (before the process is suspended, say).
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
    private let storageQueue: DispatchQueue
    private let state = Locked(State())

    /// A registry over `store`; each visitor is read from the store on first use (a small file),
    /// and every change is saved on `storageQueue`, in order.
    ///
    /// One registry per file: two registries over one file lose each other's updates. Never give
    /// it a store on a directory an `AudienceSegmentsClient` uses; use that client's
    /// `visitorSegments` instead.
    public init(
        store: any VisitorSegmentsStore, logger: any SegmentsLogger,
        storageQueue: DispatchQueue = DispatchQueue(label: "RealtimeSegments.visitors.storage")
    ) {
        self.store = store
        self.logger = logger
        self.storageQueue = storageQueue
    }

    /// Waits until every change made before this call has been saved (or failed to, logged).
    ///
    /// It blocks the calling thread for as long as the disk takes: call it from tests or
    /// background work, never from the main thread (<doc:Behaviour#R1>), and never from async code.
    public func waitUntilSaved() {
        storageQueue.sync {}
    }

    /// Merges `values` into the visitor's default segments (<doc:Behaviour#V1>): the six keys
    /// `country`, `browser`, `devices`, `source`, `campaign`, `visitorType` are set, keys not given
    /// keep their value, unknown keys are logged as a warning and ignored. Never throws.
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

    /// Appends `segmentIds` to the visitor's custom segments, skipping ids already present
    /// (<doc:Behaviour#V2>). Never throws. A visitor keeps at most 10,000 custom segment ids: new
    /// ids past that are not added, and one error is logged naming the limit (every visitor's
    /// segments share one file, which must stay small enough to be read back, <doc:Behaviour#P7>).
    ///
    /// - Returns: the visitor's segments after the call.
    @discardableResult
    public func setCustomSegments(_ segmentIds: [String], forVisitor visitorId: String) -> VisitorSegments {
        var refused = 0
        let segments = update(visitorId, kind: .customSegments) { refused = $0.appendCustomSegmentsWithinLimit(segmentIds) }
        if refused > 0 {
            logger.log(
                .error, "Segments: Refused \(refused) custom segment ids for a visitor: a visitor keeps at most "
                    + "\(VisitorSegments.maximumCustomSegments) custom segments")
        }
        return segments
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

    /// Read, change and announce as one step under the lock (<doc:Behaviour#V3>); the save is
    /// queued in the same step, so saves run in the order of the changes.
    private func update(
        _ visitorId: String, kind: VisitorSegmentsChange.Kind, _ change: (inout VisitorSegments) -> Void
    ) -> VisitorSegments {
        let store = self.store, logger = self.logger
        let segments = state.withLock { state -> VisitorSegments in
            var segments = current(visitorId, &state)
            change(&segments)
            state.visitors[visitorId] = segments
            let saved = segments
            // Only queued here (never run under the lock): the write and its fsync happen on the
            // storage queue.
            storageQueue.async {
                do {
                    try store.save(saved, forVisitor: visitorId)
                } catch {
                    // The change stays in memory for this session; the next successful save persists it.
                    logger.log(
                        .error, "Segments: Could not save visitor segments: \(SegmentsError.wrapping(error, as: .storage))")
                }
            }
            let event = VisitorSegmentsChange(visitorId: visitorId, kind: kind, segments: segments)
            for subscriber in state.subscribers.values where subscriber.visitorId.map({ $0 == visitorId }) ?? true {
                subscriber.continuation.yield(event)
            }
            return segments
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
