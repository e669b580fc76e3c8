import Foundation
import SegmentsDomain

/// The identity of one listener registration, returned by registration and used to remove it.
public struct ListenerToken: Hashable, Sendable {
    let rawValue: Int
}

/// A listener of one category (SPEC M4): whether it wants the first load, and its handler.
public struct SegmentListener: Sendable {
    /// The category listened to.
    public var category: SegmentCategory
    /// Whether the listener is told the current list once, even when nothing changed (SPEC D6).
    public var includeFirstLoad: Bool
    /// Called on the delivery queue with the category's full current list.
    public var handler: @Sendable ([Segment]) -> Void

    /// Creates a listener.
    public init(
        category: SegmentCategory, includeFirstLoad: Bool, handler: @escaping @Sendable ([Segment]) -> Void
    ) {
        self.category = category
        self.includeFirstLoad = includeFirstLoad
        self.handler = handler
    }
}

/// A weak reference to the object a listener is tied to. Only read and cleared atomically by the
/// Swift runtime, which makes it safe to share.
final class WeakOwner: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

/// The registered listeners in registration order, with O(1) add and remove.
struct ListenerRegistry: Sendable {
    struct Registration: Sendable {
        let token: ListenerToken
        let listener: SegmentListener
        /// Groups the registrations of one value so removing the value removes all of them.
        let group: UUID?
        let owner: WeakOwner?
        /// Closed when the registration ends; deliveries run through it.
        let gate = ListenerGate()
        /// Whether the first-load promise of D6 is still to be kept.
        var awaitingFirstLoad: Bool

        var isAlive: Bool { owner == nil || owner?.object != nil }
    }

    private var byToken: [Int: Registration] = [:]
    private var tokensByGroup: [UUID: Set<Int>] = [:]
    /// The registrations tied to an owner: the only ones that can end by themselves, so pruning
    /// and liveness checks cost nothing when no listener has an owner.
    private var ownedTokens: Set<Int> = []
    private var nextToken = 0

    mutating func add(_ listener: SegmentListener, group: UUID?, owner: AnyObject?) -> ListenerToken {
        let token = ListenerToken(rawValue: nextToken)
        nextToken += 1
        byToken[token.rawValue] = Registration(
            token: token, listener: listener, group: group, owner: owner.map(WeakOwner.init),
            awaitingFirstLoad: listener.includeFirstLoad)
        if let group { tokensByGroup[group, default: []].insert(token.rawValue) }
        if owner != nil { ownedTokens.insert(token.rawValue) }
        return token
    }

    /// Removes a registration; returns its gate for the caller to close outside the engine lock.
    @discardableResult
    mutating func remove(_ token: ListenerToken) -> [ListenerGate] {
        guard let registration = byToken.removeValue(forKey: token.rawValue) else { return [] }
        ownedTokens.remove(token.rawValue)
        if let group = registration.group {
            tokensByGroup[group]?.remove(token.rawValue)
            if tokensByGroup[group]?.isEmpty == true { tokensByGroup[group] = nil }
        }
        return [registration.gate]
    }

    /// Removes every registration of `group`; returns their gates.
    mutating func removeGroup(_ group: UUID) -> [ListenerGate] {
        (tokensByGroup[group] ?? []).flatMap { remove(ListenerToken(rawValue: $0)) }
    }

    /// Removes every registration; returns their gates.
    mutating func removeAll() -> [ListenerGate] {
        defer {
            byToken = [:]
            tokensByGroup = [:]
            ownedTokens = []
        }
        return byToken.values.map(\.gate)
    }

    /// Drops registrations whose owner is gone.
    mutating func pruneReleasedOwners() {
        for token in ownedTokens where byToken[token]?.isAlive == false {
            // Nothing to close: a delivery checks the owner itself, and the owner is gone.
            remove(ListenerToken(rawValue: token))
        }
    }

    var isEmpty: Bool {
        ownedTokens.isEmpty ? byToken.isEmpty : !byToken.values.contains { $0.isAlive }
    }
    var count: Int {
        ownedTokens.isEmpty ? byToken.count : byToken.values.filter(\.isAlive).count
    }
    var anyWantsFirstLoad: Bool { byToken.values.contains { $0.isAlive && $0.listener.includeFirstLoad } }

    /// Live registrations in registration order.
    var ordered: [Registration] {
        byToken.values.filter(\.isAlive).sorted { $0.token.rawValue < $1.token.rawValue }
    }

    mutating func markFirstLoadKept(_ token: ListenerToken) {
        byToken[token.rawValue]?.awaitingFirstLoad = false
    }
}
