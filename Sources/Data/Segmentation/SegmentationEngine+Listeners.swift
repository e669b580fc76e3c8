import Foundation
import SegmentsDomain

extension SegmentationEngine {
    /// Registers a listener (see Behaviour M4); callable from any thread, in call order.
    ///
    /// When the engine is configured this requests a reload (see Behaviour T1).
    /// - Parameters:
    ///   - group: registrations sharing a group are removed together by ``removeListeners(group:)``.
    ///   - owner: when given, the registration ends by itself once `owner` is deallocated.
    /// - Returns: the token that removes this one registration.
    @discardableResult
    package func addListener(_ listener: SegmentListener, group: UUID? = nil, owner: AnyObject? = nil) -> ListenerToken {
        let now = moment
        return transition { $0.addListener(listener, group: group, owner: owner, at: now) }
    }

    /// Removes one registration; unknown tokens are ignored. Never waits: once this returns no
    /// new call of the handler starts, and a call running right now may finish (see Behaviour D7). A
    /// handler may remove its own listener.
    package func removeListener(_ token: ListenerToken) {
        transition { machine in
            machine.removeListener(token)
            return []
        }
    }

    /// Removes every registration of `group`; an unknown group is ignored. Never waits (see Behaviour D7).
    package func removeListeners(group: UUID) {
        transition { machine in
            machine.removeListeners(group: group)
            return []
        }
    }

    /// How many listeners are registered (owners that are gone do not count).
    package var listenerCount: Int {
        read { $0.listeners.count }
    }

    /// The changes of `category` as a stream: each element is the category's full list, as a
    /// listener would receive it. Ending the iteration removes the registration.
    ///
    /// The stream keeps only the newest list when the consumer falls behind: each element is a
    /// complete list, so an older one is never needed once a newer one arrived, and a consumer
    /// that stops reading cannot make the stream grow without bound.
    package func changes(of category: SegmentCategory, includeFirstLoad: Bool = false) -> AsyncStream<[Segment]> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let token = addListener(
                SegmentListener(category: category, includeFirstLoad: includeFirstLoad) { continuation.yield($0) })
            continuation.onTermination = { [weak self] _ in self?.removeListener(token) }
        }
    }
}
