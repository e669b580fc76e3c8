import Foundation
import SegmentsDomain
import SegmentsData

extension SegmentsClient {
    /// Registers a listener of `category` (<doc:Behaviour#M4>,
    /// <doc:Behaviour#D5>–<doc:Behaviour#D8>); callable from any thread.
    ///
    /// - Parameters:
    ///   - category: the category listened to.
    ///   - includeFirstLoad: tell the current list once, even when nothing changed
    ///                       (<doc:Behaviour#D6>).
    ///   - owner: when given, the listener ends by itself when `owner` is deallocated.
    ///   - handler: called on the delivery queue with the category's full list on each change.
    /// - Returns: the token that removes this registration.
    @discardableResult
    public func addListener(
        category: SegmentCategory, includeFirstLoad: Bool = false, owner: AnyObject? = nil,
        handler: @escaping @Sendable ([Segment]) -> Void
    ) -> ListenerToken {
        engine.addListener(
            SegmentListener(category: category, includeFirstLoad: includeFirstLoad, handler: handler), owner: owner)
    }

    /// Removes one registration; a delivery already queued for it is dropped.
    public func removeListener(_ token: ListenerToken) {
        engine.removeListener(token)
    }

    /// How many listeners are registered (those whose owner is gone do not count).
    public var listenerCount: Int {
        engine.listenerCount
    }

    /// The changes of `category` as an `AsyncStream`; ending the iteration removes the listener, and
    /// ``stop()`` finishes the stream (<doc:Behaviour#M5>).
    ///
    /// ```swift
    /// for await segments in client.changes(of: .discovery(), includeFirstLoad: true) { show(segments) }
    /// ```
    public func changes(of category: SegmentCategory, includeFirstLoad: Bool = false) -> AsyncStream<[Segment]> {
        engine.changes(of: category, includeFirstLoad: includeFirstLoad)
    }

    /// The segments of `category` for the current customer (<doc:Behaviour#G1>–<doc:Behaviour#G6>):
    /// from the 5-second cache unless `force`, otherwise fetched (sharing a fetch already in flight).
    /// - Throws: ``SegmentsError`` when the fetch fails, or `.stopped` after ``stop()``.
    public func getSegments(force: Bool = false, category: SegmentCategory) async throws -> [Segment] {
        try await engine.getSegments(force: force, category: category)
    }

    /// The completion-handler form of ``getSegments(force:category:)``: answered exactly once, on
    /// the delivery queue.
    public func getSegments(
        force: Bool = false, category: SegmentCategory,
        completion: @escaping @Sendable (Result<[Segment], SegmentsError>) -> Void
    ) {
        engine.getSegments(force: force, category: category, completion: completion)
    }
}
