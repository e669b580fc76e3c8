import Foundation
import SegmentsDomain

extension SegmentationEngine {
    /// Registers a listener (SPEC M4); callable from any thread, in call order.
    ///
    /// When the engine is configured this requests a reload (SPEC T1).
    /// - Parameters:
    ///   - group: registrations sharing a group are removed together by ``removeListeners(group:)``.
    ///   - owner: when given, the registration ends by itself once `owner` is deallocated.
    /// - Returns: the token that removes this one registration.
    @discardableResult
    public func addListener(_ listener: SegmentListener, group: UUID? = nil, owner: AnyObject? = nil) -> ListenerToken {
        mutate { state, effects in
            state.listeners.pruneReleasedOwners()
            let token = state.listeners.add(listener, group: group, owner: owner)
            if state.backend != nil {
                requestReload(&state, &effects)
                warnIfTrackingNotImmediate(&state, &effects)
            }
            return token
        }
    }

    /// Removes one registration; unknown tokens are ignored. A delivery already queued for it is
    /// dropped, and a handler running right now finishes before this returns: afterwards the
    /// handler is never called (SPEC D7). A handler may remove its own listener.
    public func removeListener(_ token: ListenerToken) {
        // Gates close outside the engine lock: closing waits for a running handler, which may
        // itself be calling into the engine.
        mutate { state, _ in state.listeners.remove(token) }.forEach { $0.close() }
    }

    /// Removes every registration of `group`; an unknown group is ignored.
    public func removeListeners(group: UUID) {
        mutate { state, _ in state.listeners.removeGroup(group) }.forEach { $0.close() }
    }

    /// How many listeners are registered (owners that are gone do not count).
    public var listenerCount: Int {
        state.withLock { $0.listeners.count }
    }

    /// The changes of `category` as a stream: each element is the category's full list, as a
    /// listener would receive it. Ending the iteration removes the registration.
    public func changes(of category: SegmentCategory, includeFirstLoad: Bool = false) -> AsyncStream<[Segment]> {
        AsyncStream { continuation in
            let token = addListener(
                SegmentListener(category: category, includeFirstLoad: includeFirstLoad) { continuation.yield($0) })
            continuation.onTermination = { [weak self] _ in self?.removeListener(token) }
        }
    }

    /// Queues deliveries on the delivery queue (SPEC D5–D8): each live listener, in registration
    /// order, gets its category's list when the category is in `changes`, or — when `firstLoad`
    /// is given and the listener still waits for its first load — the list from `firstLoad`.
    /// Must be called under the lock, so deliveries are queued in the order of state changes.
    func deliver(_ changes: SegmentsByCategory, firstLoad: SegmentsByCategory?, _ state: inout EngineState) {
        for registration in state.listeners.ordered {
            let category = registration.listener.category
            let segments: [Segment]
            if let changed = changes[category] {
                segments = changed
            } else if let firstLoad, registration.awaitingFirstLoad {
                segments = firstLoad[category] ?? []
            } else {
                continue
            }
            if firstLoad != nil { state.listeners.markFirstLoadKept(registration.token) }
            let gate = registration.gate
            let owner = registration.owner
            let handler = registration.listener.handler
            dependencies.deliveryQueue.async {
                // A listener removed after this was queued must not hear it (SPEC D7).
                gate.run {
                    if owner == nil || owner?.object != nil { handler(segments) }
                }
            }
        }
    }

    /// Answers every pending read with `result` narrowed to its category, on the delivery queue.
    func answerReads(_ state: inout EngineState, with result: Result<SegmentsByCategory, SegmentsError>) {
        let reads = state.reads
        state.reads = []
        for read in reads {
            answer(read, with: result.map { $0[read.category] ?? [] })
        }
    }

    func answer(_ read: EngineState.PendingRead, with result: Result<[Segment], SegmentsError>) {
        let completion = read.completion
        dependencies.deliveryQueue.async { completion(result) }
    }
}
