import Foundation
import SegmentsDomain

/// The identity of one listener registration, returned by registration and used to remove it.
public struct ListenerToken: Hashable, Sendable {
    let rawValue: Int
}

/// A listener of one category (see Behaviour M4): whether it wants the first load, and its handler.
package struct SegmentListener: Sendable {
    /// The category listened to.
    package var category: SegmentCategory
    /// Whether the listener is told the current list once, even when nothing changed (see Behaviour D6).
    package var includeFirstLoad: Bool
    /// Called on the delivery queue with the category's full current list.
    package var handler: @Sendable ([Segment]) -> Void

    /// Creates a listener.
    package init(
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

/// One handler call the delivery queue makes: the registration's gate and owner are checked when
/// it runs, not when it was decided (see Behaviour D7).
struct Delivery: Sendable {
    let gate: ListenerGate
    let owner: WeakOwner?
    let handler: @Sendable ([Segment]) -> Void
    let segments: [Segment]

    /// Calls the handler unless the registration ended or its owner is gone.
    func run() {
        gate.run {
            if owner == nil || owner?.object != nil { handler(segments) }
        }
    }
}

/// The registered listeners, indexed by category in registration order (see Behaviour M4, D5–D7).
///
/// Adding and removing are O(1) (amortized: a category's list drops removed tokens once they are
/// half of it); finding whom to tell about a category's change touches only that category's
/// listeners, so one change reaches 10,000 listeners without sorting or filtering every
/// registration.
struct ListenerRegistry: Sendable {
    struct Registration: Sendable {
        let token: ListenerToken
        let listener: SegmentListener
        /// Groups the registrations of one value so removing the value removes all of them.
        let group: UUID?
        let owner: WeakOwner?
        /// Closed when the registration ends; deliveries run through it.
        let gate = ListenerGate()

        var isAlive: Bool { owner == nil || owner?.object != nil }

        func delivery(of segments: [Segment]) -> Delivery {
            Delivery(gate: gate, owner: owner, handler: listener.handler, segments: segments)
        }
    }

    /// The tokens of one category in registration order (ascending); removed ones stay until
    /// they are half of the list.
    private struct CategoryIndex: Sendable {
        var tokens: [Int] = []
        var removed = 0
        var live: Int { tokens.count - removed }
    }

    private var byToken: [Int: Registration] = [:]
    private var tokensByCategory: [SegmentCategory: CategoryIndex] = [:]
    private var tokensByGroup: [UUID: Set<Int>] = [:]
    /// Registrations whose first-load promise (see Behaviour D6) is still to be kept.
    private(set) var awaitingFirstLoad: Set<Int> = []
    /// The registrations tied to an owner: the only ones that can end by themselves, so pruning
    /// and liveness checks cost nothing when no listener has an owner.
    private var ownedTokens: Set<Int> = []
    private var nextToken = 0

    mutating func add(_ listener: SegmentListener, group: UUID?, owner: AnyObject?) -> ListenerToken {
        let token = ListenerToken(rawValue: nextToken)
        nextToken += 1
        byToken[token.rawValue] = Registration(
            token: token, listener: listener, group: group, owner: owner.map(WeakOwner.init))
        tokensByCategory[listener.category, default: CategoryIndex()].tokens.append(token.rawValue)
        if let group { tokensByGroup[group, default: []].insert(token.rawValue) }
        if owner != nil { ownedTokens.insert(token.rawValue) }
        if listener.includeFirstLoad { awaitingFirstLoad.insert(token.rawValue) }
        return token
    }

    /// Removes a registration and closes its gate; returns its category when that was the
    /// category's last listener.
    @discardableResult
    mutating func remove(_ token: ListenerToken) -> SegmentCategory? {
        guard let registration = byToken.removeValue(forKey: token.rawValue) else { return nil }
        registration.gate.close()
        ownedTokens.remove(token.rawValue)
        awaitingFirstLoad.remove(token.rawValue)
        if let group = registration.group {
            tokensByGroup[group]?.remove(token.rawValue)
            if tokensByGroup[group]?.isEmpty == true { tokensByGroup[group] = nil }
        }
        let category = registration.listener.category
        guard let index = tokensByCategory[category] else { return nil }
        guard index.live > 1 else {
            tokensByCategory[category] = nil
            return category
        }
        tokensByCategory[category]?.removed += 1
        if index.removed * 2 >= index.tokens.count {
            tokensByCategory[category]?.tokens.removeAll { byToken[$0] == nil }
            tokensByCategory[category]?.removed = 0
        }
        return nil
    }

    /// Removes every registration of `group`; returns the categories left without listeners.
    mutating func removeGroup(_ group: UUID) -> [SegmentCategory] {
        (tokensByGroup[group] ?? []).sorted().compactMap { remove(ListenerToken(rawValue: $0)) }
    }

    /// Removes every registration and closes their gates.
    mutating func removeAll() {
        for registration in byToken.values { registration.gate.close() }
        self = ListenerRegistry(nextToken: nextToken)
    }

    private init(nextToken: Int) {
        self.nextToken = nextToken
    }

    init() {}

    /// Drops registrations whose owner is gone; returns the categories left without listeners.
    @discardableResult
    mutating func pruneReleasedOwners() -> [SegmentCategory] {
        ownedTokens.filter { byToken[$0]?.isAlive == false }.sorted()
            .compactMap { remove(ListenerToken(rawValue: $0)) }
    }

    var isEmpty: Bool {
        ownedTokens.isEmpty ? byToken.isEmpty : !byToken.values.contains { $0.isAlive }
    }
    var count: Int {
        ownedTokens.isEmpty ? byToken.count : byToken.values.filter(\.isAlive).count
    }
    var anyWantsFirstLoad: Bool {
        awaitingFirstLoad.contains { byToken[$0]?.isAlive == true }
    }
    /// How many groups have registrations: the group bookkeeping shrinks as its members go.
    var groupCount: Int { tokensByGroup.count }

    /// The calls that tell every listener of `category` (in registration order) `segments`.
    func deliveries(of segments: [Segment], to category: SegmentCategory) -> [Delivery] {
        (tokensByCategory[category]?.tokens ?? []).compactMap { byToken[$0]?.delivery(of: segments) }
    }

    /// The listeners still waiting for their first load, by category, in registration order.
    var awaitingFirstLoadByCategory: [SegmentCategory: [Registration]] {
        Dictionary(grouping: awaitingFirstLoad.sorted().compactMap { byToken[$0] }, by: \.listener.category)
    }

    /// A successful reload kept every pending first-load promise (see Behaviour D6).
    mutating func keepFirstLoadPromises() {
        awaitingFirstLoad = []
    }
}
